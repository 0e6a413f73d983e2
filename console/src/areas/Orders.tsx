import { useState } from 'react';
import { formatTime, gql, PAGE_INFO, type PageInfo } from '../api';
import type { Can } from '../App';
import { ErrorMessage, Pager, pageArgs, Section, useAction, useLoad, type Cursor } from '../ui';

interface OrderRow {
  id: string;
  status: string;
  created_at: number;
  warehouse: { name: string };
  channel: { name: string };
  items: {
    id: string;
    sku: string;
    quantity: number;
    state: string;
    shipped_at: number | null;
    allocations: { warehouse: { name: string }; state: string; quantity: number }[];
  }[];
}

const STATUSES = ['', 'OPEN', 'PARTIALLY_SHIPPED', 'SHIPPED', 'CANCELLED'];

/** Orders with their status and lines; one order's allocations; shipping and cancelling it. */
export function OrdersArea({ can }: { can: Can }) {
  const [status, setStatus] = useState('');
  const [cursor, setCursor] = useState<Cursor>({});
  const [openId, setOpenId] = useState<string | null>(null);
  const { data, error, reload } = useLoad(
    () =>
      gql<{ orders: { edges: { node: OrderRow }[]; pageInfo: PageInfo } }>(
        `query($status: OrderStatus, $first: Int, $after: String, $last: Int, $before: String) {
          orders(status: $status, first: $first, after: $after, last: $last, before: $before) {
            edges { node { id status created_at warehouse { name } channel { name }
              items { id sku quantity state shipped_at allocations { warehouse { name } state quantity } } } }
            ${PAGE_INFO}
          }
        }`,
        { status: status || null, ...pageArgs(cursor) },
      ),
    [status, cursor],
  );
  const rows = data?.orders.edges.map((edge) => edge.node) ?? [];
  const open = rows.find((row) => row.id === openId);
  return (
    <div className="orders">
      <Section title="Orders">
        <form className="inline" onSubmit={(event) => event.preventDefault()}>
          <label htmlFor="order-status">Status</label>
          <select
            id="order-status"
            value={status}
            onChange={(event) => {
              setStatus(event.target.value);
              setCursor({});
            }}
          >
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {value || 'Any'}
              </option>
            ))}
          </select>
        </form>
        <ErrorMessage error={error} />
        {data && rows.length === 0 && <p>No orders.</p>}
        {rows.length > 0 && (
          <table className="order-list">
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Status</th>
                <th scope="col">Placed</th>
                <th scope="col">Channel</th>
                <th scope="col">Warehouse</th>
                <th scope="col">Items</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  <td>
                    <button type="button" className="link" onClick={() => setOpenId(row.id)}>
                      {row.id.slice(0, 8)}
                    </button>
                  </td>
                  <td data-field="status">{row.status}</td>
                  <td>{formatTime(Number(row.created_at))}</td>
                  <td>{row.channel.name}</td>
                  <td>{row.warehouse.name}</td>
                  <td>{row.items.map((item) => `${item.quantity} × ${item.sku}`).join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager info={data?.orders.pageInfo} onPage={setCursor} label="Orders" />
      </Section>
      {open && <OrderDetail order={open} can={can} onChange={reload} />}
    </div>
  );
}

function OrderDetail({ order, can, onChange }: { order: OrderRow; can: Can; onChange: () => void }) {
  const { error, busy, run } = useAction();
  const act = async (mutation: 'shipOrder' | 'cancelOrder') => {
    const done = await run(() =>
      gql(`mutation($id: ID!) { ${mutation}(input: { id: $id }) { order { id status } } }`, { id: order.id }),
    );
    if (done) onChange();
  };
  const live = order.status === 'OPEN' || order.status === 'PARTIALLY_SHIPPED';
  return (
    <Section title={`Order ${order.id}`}>
      <p>
        Status <strong>{order.status}</strong>, placed {formatTime(Number(order.created_at))}
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">SKU</th>
            <th scope="col">Quantity</th>
            <th scope="col">State</th>
            <th scope="col">Allocated</th>
            <th scope="col">Shipped</th>
          </tr>
        </thead>
        <tbody>
          {order.items.map((item) => (
            <tr key={item.id}>
              <td>{item.sku}</td>
              <td>{item.quantity}</td>
              <td>{item.state}</td>
              <td>
                {item.allocations
                  .map((entry) => `${entry.quantity} ${entry.state} at ${entry.warehouse.name}`)
                  .join(', ') || '—'}
              </td>
              <td>{formatTime(item.shipped_at === null ? null : Number(item.shipped_at))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {can('orders:write') && live && (
        <div className="actions">
          <button type="button" disabled={busy} onClick={() => act('shipOrder')}>
            Ship order
          </button>
          <button type="button" disabled={busy} onClick={() => act('cancelOrder')}>
            Cancel order
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
    </Section>
  );
}
