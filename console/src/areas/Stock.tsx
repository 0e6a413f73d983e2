import { useState } from 'react';
import { formatTime, gql, PAGE_INFO, rest, type PageInfo } from '../api';
import type { Can } from '../App';
import { ErrorMessage, Pager, pageArgs, Section, useAction, useLoad, type Cursor } from '../ui';

interface Connection<T> {
  edges: { node: T }[];
  pageInfo: PageInfo;
}

interface StockLine {
  id: string;
  ids: string[];
  quantity: number;
  quantity_available: number;
  quantity_reserved: number;
  quantity_committed: number;
  quantity_unavailable: number;
  quantity_safety: number;
  quantity_sellable: number;
  warehouse: { id: string; name: string } | null;
  position: { code: string } | null;
}

/** Products, one product's stock per warehouse and position with its ledger, and the active reservations. */
export function StockArea({ can }: { can: Can }) {
  const [sku, setSku] = useState<string | null>(null);
  const [changes, setChanges] = useState(0);
  const changed = () => setChanges((value) => value + 1);
  return (
    <div className="stock">
      {can('catalog:read') && <Products onPick={setSku} />}
      <SkuForm onPick={setSku} />
      {sku && <ProductStock key={`${sku}:${changes}`} sku={sku} can={can} onChange={changed} />}
      {sku && <Ledger key={`ledger:${sku}:${changes}`} sku={sku} />}
      <Reservations can={can} onChange={changed} />
    </div>
  );
}

function SkuForm({ onPick }: { onPick: (sku: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      className="inline"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim()) onPick(value.trim());
      }}
    >
      <label htmlFor="sku-filter">SKU</label>
      <input id="sku-filter" value={value} onChange={(event) => setValue(event.target.value)} />
      <button type="submit">Show stock</button>
    </form>
  );
}

function Products({ onPick }: { onPick: (sku: string) => void }) {
  const [cursor, setCursor] = useState<Cursor>({});
  const { data, error } = useLoad(
    () =>
      gql<{ products: Connection<{ id: string; sku: string; name: string }> }>(
        `query($first: Int, $after: String, $last: Int, $before: String) {
          products(first: $first, after: $after, last: $last, before: $before) {
            edges { node { id sku name } } ${PAGE_INFO}
          }
        }`,
        pageArgs(cursor),
      ),
    [cursor],
  );
  return (
    <Section title="Products">
      <ErrorMessage error={error} />
      <table>
        <thead>
          <tr>
            <th scope="col">SKU</th>
            <th scope="col">Name</th>
          </tr>
        </thead>
        <tbody>
          {data?.products.edges.map(({ node }) => (
            <tr key={node.id}>
              <td>
                <button type="button" className="link" onClick={() => onPick(node.sku)}>
                  {node.sku}
                </button>
              </td>
              <td>{node.name}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager info={data?.products.pageInfo} onPage={setCursor} label="Products" />
    </Section>
  );
}

function ProductStock({ sku, can, onChange }: { sku: string; can: Can; onChange: () => void }) {
  const [cursor, setCursor] = useState<Cursor>({});
  const { data, error } = useLoad(
    () =>
      gql<{ inventory: Connection<StockLine> }>(
        `query($sku: String, $first: Int, $after: String, $last: Int, $before: String) {
          inventory(sku: $sku, first: $first, after: $after, last: $last, before: $before) { edges { node {
            id ids quantity quantity_available quantity_reserved quantity_committed quantity_unavailable
            quantity_safety quantity_sellable warehouse { id name } position { code }
          } } ${PAGE_INFO} }
        }`,
        { sku, ...pageArgs(cursor) },
      ),
    [sku, cursor],
  );
  const writer = can('inventory:write');
  const lines = data?.inventory.edges.map((edge) => edge.node) ?? [];
  return (
    <Section title={`Stock of ${sku}`}>
      <ErrorMessage error={error} />
      {data && lines.length === 0 && <p>No stock of {sku} anywhere yet.</p>}
      {lines.length > 0 && (
        <table className="levels">
          <thead>
            <tr>
              <th scope="col">Warehouse</th>
              <th scope="col">Position</th>
              <th scope="col">On hand</th>
              <th scope="col">Available</th>
              <th scope="col">Reserved</th>
              <th scope="col">Committed</th>
              <th scope="col">Unavailable</th>
              <th scope="col">Safety</th>
              <th scope="col">Sellable</th>
              {writer && <th scope="col">Count</th>}
            </tr>
          </thead>
          <tbody>
            {lines.map((line) => (
              <tr key={line.id} className={line.quantity_sellable <= 0 ? 'low' : undefined}>
                <td>{line.warehouse?.name ?? '—'}</td>
                <td>{line.position?.code ?? '—'}</td>
                <td data-field="quantity">{line.quantity}</td>
                <td>{line.quantity_available}</td>
                <td>{line.quantity_reserved}</td>
                <td>{line.quantity_committed}</td>
                <td>{line.quantity_unavailable}</td>
                <td>{line.quantity_safety}</td>
                <td>
                  {line.quantity_sellable}
                  {line.quantity_sellable <= 0 && <span className="badge"> low stock</span>}
                </td>
                {writer && <td>{line.ids.length === 1 && <CountForm line={line} sku={sku} onChange={onChange} />}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager info={data?.inventory.pageInfo} onPage={setCursor} label="Stock levels" />
      {writer && <ReceiveForm sku={sku} onChange={onChange} />}
    </Section>
  );
}

/** Records a count of one line: PATCH with the counted quantity, refused if the line changed since it was read. */
function CountForm({ line, sku, onChange }: { line: StockLine; sku: string; onChange: () => void }) {
  const [value, setValue] = useState(String(line.quantity));
  const { error, busy, run } = useAction();
  const id = `count-${line.id}`;
  return (
    <form
      className="inline"
      onSubmit={async (event) => {
        event.preventDefault();
        const body = { data: [{ id: line.ids[0], quantity: Number(value), expectedQuantity: Number(line.quantity) }] };
        if (await run(() => rest('PATCH', '/api/inventory/items', body))) onChange();
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        Counted quantity of {sku} at {line.warehouse?.name} {line.position?.code ?? ''}
      </label>
      <input id={id} type="number" min={0} value={value} onChange={(event) => setValue(event.target.value)} />
      <button type="submit" disabled={busy}>
        Save count
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

/** Receives units of the SKU into a warehouse (and position): POST /api/inventory/items. */
function ReceiveForm({ sku, onChange }: { sku: string; onChange: () => void }) {
  const { data, error: loadError } = useLoad(
    () =>
      gql<{ warehouses: Connection<{ id: string; name: string; business: { id: string } }> }>(
        `{ warehouses(first: 50) { edges { node { id name business { id } } } ${PAGE_INFO} } }`,
      ),
    [],
  );
  const [warehouse, setWarehouse] = useState('');
  const [position, setPosition] = useState('');
  const [quantity, setQuantity] = useState('1');
  const { error, busy, run } = useAction();
  const warehouses = data?.warehouses.edges.map((edge) => edge.node) ?? [];
  const chosen = warehouses.find((entry) => entry.id === warehouse) ?? warehouses[0];
  return (
    <form
      className="receive"
      aria-label="Receive stock"
      onSubmit={async (event) => {
        event.preventDefault();
        if (!chosen) return;
        const entry = {
          sku,
          warehouseId: chosen.id,
          businessId: chosen.business.id,
          quantity: Number(quantity),
          ...(position.trim() ? { position: position.trim() } : {}),
        };
        if (await run(() => rest('POST', '/api/inventory/items', { data: [entry] }))) onChange();
      }}
    >
      <h3>Receive stock</h3>
      <ErrorMessage error={loadError} />
      <label htmlFor="receive-warehouse">Warehouse</label>
      <select id="receive-warehouse" value={chosen?.id ?? ''} onChange={(event) => setWarehouse(event.target.value)}>
        {warehouses.map((entry) => (
          <option key={entry.id} value={entry.id}>
            {entry.name}
          </option>
        ))}
      </select>
      <label htmlFor="receive-position">Position code (optional)</label>
      <input id="receive-position" value={position} onChange={(event) => setPosition(event.target.value)} />
      <label htmlFor="receive-quantity">Quantity</label>
      <input
        id="receive-quantity"
        type="number"
        min={0}
        value={quantity}
        onChange={(event) => setQuantity(event.target.value)}
      />
      <button type="submit" disabled={busy || !chosen}>
        Receive
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

interface Mutation {
  id: string;
  source: string;
  delta: number;
  new_quantity: number;
  created_at: number;
  location: { warehouse: { name: string }; position: { code: string } | null };
}

/** The SKU's stock ledger, newest first, with the cause of every change. */
function Ledger({ sku }: { sku: string }) {
  const [cursor, setCursor] = useState<Cursor>({});
  const { data, error } = useLoad(
    () =>
      gql<{ stockMutations: Connection<Mutation> }>(
        `query($query: QueryFilter, $first: Int, $after: String, $last: Int, $before: String) {
          stockMutations(query: $query, first: $first, after: $after, last: $last, before: $before) {
            edges { node { id source delta new_quantity created_at location { warehouse { name } position { code } } } }
            ${PAGE_INFO}
          }
        }`,
        { query: `sku=${encodeURIComponent(sku)}&sort=-created_at`, ...pageArgs(cursor) },
      ),
    [sku, cursor],
  );
  return (
    <Section title={`Ledger of ${sku}`}>
      <ErrorMessage error={error} />
      <table className="ledger">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Cause</th>
            <th scope="col">Where</th>
            <th scope="col">Change</th>
            <th scope="col">New on hand</th>
          </tr>
        </thead>
        <tbody>
          {data?.stockMutations.edges.map(({ node }) => (
            <tr key={node.id}>
              <td>{formatTime(Number(node.created_at))}</td>
              <td>{node.source}</td>
              <td>
                {node.location.warehouse.name}
                {node.location.position ? ` ${node.location.position.code}` : ''}
              </td>
              <td>{Number(node.delta) > 0 ? `+${node.delta}` : node.delta}</td>
              <td>{node.new_quantity}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager info={data?.stockMutations.pageInfo} onPage={setCursor} label="Ledger" />
    </Section>
  );
}

interface Reservation {
  id: string;
  expires_at: number;
  customer: { name: string };
  warehouse: { name: string };
  items: { sku: string; quantity: number }[];
}

/** Active reservations with their expiry; releasing one gives its units back at once. */
function Reservations({ can, onChange }: { can: Can; onChange: () => void }) {
  const [cursor, setCursor] = useState<Cursor>({});
  const { data, error, reload } = useLoad(
    () =>
      gql<{ reservations: Connection<Reservation> }>(
        `query($first: Int, $after: String, $last: Int, $before: String) {
          reservations(status: ACTIVE, first: $first, after: $after, last: $last, before: $before) {
            edges { node { id expires_at customer { name } warehouse { name } items { sku quantity } } } ${PAGE_INFO}
          }
        }`,
        pageArgs(cursor),
      ),
    [cursor],
  );
  const { error: releaseError, busy, run } = useAction();
  const writer = can('inventory:write');
  const rows = data?.reservations.edges.map((edge) => edge.node) ?? [];
  return (
    <Section title="Active reservations">
      <ErrorMessage error={error} />
      <ErrorMessage error={releaseError} />
      {data && rows.length === 0 && <p>No active reservations.</p>}
      {rows.length > 0 && (
        <table className="reservations">
          <thead>
            <tr>
              <th scope="col">Customer</th>
              <th scope="col">Warehouse</th>
              <th scope="col">Items</th>
              <th scope="col">Expires</th>
              {writer && <th scope="col">Release</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id}>
                <td>{row.customer.name}</td>
                <td>{row.warehouse.name}</td>
                <td>{row.items.map((item) => `${item.quantity} × ${item.sku}`).join(', ')}</td>
                <td>{formatTime(Number(row.expires_at))}</td>
                {writer && (
                  <td>
                    <button
                      type="button"
                      disabled={busy}
                      aria-label={`Release the reservation of ${row.customer.name}`}
                      onClick={async () => {
                        const done = await run(() =>
                          gql(`mutation($id: ID!) { removeReservation(input: { id: $id }) { reservation { id } } }`, {
                            id: row.id,
                          }),
                        );
                        if (done) {
                          reload();
                          onChange();
                        }
                      }}
                    >
                      Release
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager info={data?.reservations.pageInfo} onPage={setCursor} label="Reservations" />
    </Section>
  );
}
