// The demo shop, made through the public API of a running service: a tenant and its API key (with
// the master key), then over REST and GraphQL a catalog, warehouses with stock, a sales channel, a
// search index with settings, a public search engine (proxy key), an OAuth client and a user. Each
// step looks first and makes only what is missing, so a second run changes nothing.
import { randomBytes } from 'node:crypto';
import { callService, ServiceError, type Connection, type ServiceAnswer } from '../admin/connection';
import { ensureConsoleClient } from '../admin/console-client';
import { answerError, findTenantByName } from '../admin/quickstart';
import { demoProducts, type DemoProduct } from './products';
import { seedSelling } from './selling';

export const DEMO = {
  tenant: 'Demo shop',
  business: 'Demo shop BV',
  warehouses: ['Amsterdam', 'Berlin', 'Lyon'],
  channel: 'Web shop',
  index: 'demo-products',
  proxyKey: 'demo-shop',
  client: 'Demo storefront',
  email: 'demo@example.com',
} as const;

/** What a run keeps for the next one: secrets the API shows once. */
export interface SeedState {
  tenantId: string;
  apiKey: string;
  userPassword?: string;
}

export interface SeedReport {
  lines: string[];
  /** The shop's ids, as the shell variables the guides use (`TENANT_ID`, `BUSINESS_ID`, …). */
  ids: Record<string, string>;
  /** What this run made or changed; empty when everything was there. */
  changes: string[];
  state: SeedState;
}

const GRAPHQL_ALIASES_PER_OPERATION = 15;
const PARALLEL_OPERATIONS = 4;

/** Runs `tasks` with at most `width` at a time. */
async function inParallel<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, tasks.length) }, async () => {
      while (next < tasks.length) {
        const at = next++;
        results[at] = await tasks[at]!();
      }
    }),
  );
  return results;
}

class DemoShop {
  readonly changes: string[] = [];
  readonly lines: string[] = [];

  constructor(
    private readonly connection: Connection,
    private readonly key: string,
    private readonly products: DemoProduct[],
  ) {}

  private call(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
    return callService(this.connection.baseUrl, method, path, { token: this.key, body, headers });
  }

  private expect(answer: ServiceAnswer, statuses: number[], what: string): ServiceAnswer {
    if (!statuses.includes(answer.status)) throw answerError(what, answer);
    return answer;
  }

  private async graphql(query: string, variables: Record<string, unknown> = {}): Promise<any> {
    const answer = await this.call('POST', '/graphql', { query, variables });
    if (answer.status !== 200 || answer.body?.errors) throw answerError('run a GraphQL operation', answer);
    return answer.body.data;
  }

  note(made: boolean, what: string, detail: string) {
    if (made) this.changes.push(what);
    this.lines.push(`${what.padEnd(16)} ${detail}${made ? ' (created)' : ''}`);
  }

  async catalog(): Promise<{ businessId: string; channelId: string; warehouses: { id: string; name: string }[] }> {
    const { businesses } = await this.graphql('{ businesses(first: 100) { edges { node { id name } } } }');
    let business = businesses.edges.map((e: any) => e.node).find((b: any) => b.name === DEMO.business);
    if (!business) {
      const made = await this.graphql(
        'mutation($i: CreateBusinessInput!) { createBusiness(input: $i) { business { id } } }',
        {
          i: { name: DEMO.business },
        },
      );
      business = made.createBusiness.business;
    }
    this.note(!businesses.edges.some((e: any) => e.node.name === DEMO.business), 'business', business.id);

    const { warehouses } = await this.graphql(
      'query($b: ID) { warehouses(business_id: $b, first: 100) { edges { node { id name } } } }',
      { b: business.id },
    );
    const existing = warehouses.edges.map((e: any) => e.node) as { id: string; name: string }[];
    const list: { id: string; name: string }[] = [];
    for (const name of DEMO.warehouses) {
      let warehouse = existing.find((w) => w.name === name);
      if (!warehouse) {
        const made = await this.graphql(
          'mutation($i: CreateWarehouseInput!) { createWarehouse(input: $i) { warehouse { id name } } }',
          { i: { business_id: business.id, name } },
        );
        warehouse = made.createWarehouse.warehouse as { id: string; name: string };
      }
      this.note(!existing.some((w) => w.name === name), `warehouse`, `${warehouse.id} ${name}`);
      list.push(warehouse);
    }

    const { salesChannels } = await this.graphql(
      '{ salesChannels(first: 100) { edges { node { id name warehouses { id } } } } }',
    );
    let channel = salesChannels.edges.map((e: any) => e.node).find((c: any) => c.name === DEMO.channel);
    const channelMade = !channel;
    if (!channel) {
      const made = await this.graphql(
        'mutation($i: CreateSalesChannelInput!) { createSalesChannel(input: $i) { sales_channel { id warehouses { id } } } }',
        { i: { name: DEMO.channel } },
      );
      channel = made.createSalesChannel.sales_channel;
    }
    const ids = list.map((w) => w.id);
    const linked = (channel.warehouses as { id: string }[]).map((w) => w.id);
    if (linked.join() !== ids.join()) {
      await this.graphql(
        'mutation($i: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $i) { sales_channel { id } } }',
        { i: { channel_id: channel.id, warehouse_ids: ids } },
      );
      if (!channelMade) this.changes.push('sales channel warehouses');
    }
    this.note(
      channelMade,
      'sales channel',
      `${channel.id} ${DEMO.channel}, selling from ${DEMO.warehouses.join(', ')}`,
    );

    await this.products_();
    return { businessId: business.id, channelId: channel.id, warehouses: list };
  }

  /** The products whose SKUs the catalog lacks, created with several aliases per operation. */
  private async products_() {
    const skus = new Set<string>();
    let after: string | null = null;
    for (;;) {
      const { products } = await this.graphql(
        'query($after: String) { products(first: 100, after: $after) { edges { node { sku } } pageInfo { hasNextPage endCursor } } }',
        { after },
      );
      for (const edge of products.edges) skus.add(edge.node.sku);
      if (!products.pageInfo.hasNextPage) break;
      after = products.pageInfo.endCursor;
    }
    const missing = this.products.filter((product) => !skus.has(product.sku));
    const batches: DemoProduct[][] = [];
    for (let i = 0; i < missing.length; i += GRAPHQL_ALIASES_PER_OPERATION)
      batches.push(missing.slice(i, i + GRAPHQL_ALIASES_PER_OPERATION));
    await inParallel(
      batches.map((batch) => () => {
        const variables = Object.fromEntries(batch.map((p, i) => [`p${i}`, { sku: p.sku, name: p.name }]));
        const declarations = batch.map((_, i) => `$p${i}: CreateProductInput!`).join(', ');
        const fields = batch.map((_, i) => `p${i}: createProduct(input: $p${i}) { product { id } }`).join(' ');
        return this.graphql(`mutation(${declarations}) { ${fields} }`, variables);
      }),
      PARALLEL_OPERATIONS,
    );
    this.note(missing.length > 0, 'products', `${this.products.length} in the catalog (${missing.length} added now)`);
  }

  /** Stock in each warehouse that has none yet: one write of every product per warehouse. */
  async stock(businessId: string, warehouses: { id: string; name: string }[]) {
    let added = 0;
    for (const [w, warehouse] of warehouses.entries()) {
      const { inventory } = await this.graphql(
        'query($w: [ID!]) { inventory(filters: { warehouse_id: $w }, first: 1) { edges { node { id } } } }',
        { w: [warehouse.id] },
      );
      if (inventory.edges.length > 0) continue;
      const items = this.products.map((product, i) => ({
        sku: product.sku,
        warehouseId: warehouse.id,
        businessId,
        quantity: (i * 7 + w * 13) % 25,
      }));
      const answer = await this.call(
        'POST',
        '/api/inventory/items',
        { data: items },
        {
          'idempotency-key': `demo-seed-${warehouse.id}`,
        },
      );
      this.expect(answer, [201], `add the stock of ${warehouse.name}`);
      added += 1;
    }
    this.note(added > 0, 'stock', `every product in ${warehouses.length} warehouses (${added} stocked now)`);
  }

  async searchIndex() {
    const found = await this.call('GET', `/api/instant/indexes/${DEMO.index}`);
    if (found.status === 404) {
      const created = await this.call('POST', '/api/instant/indexes', {
        data: {
          name: 'Demo products',
          alias: DEMO.index,
          fields: [
            { from: 'sku', type: 'STRING', label: 'SKU' },
            { from: 'name', type: 'STRING', label: 'Name' },
            { from: 'brand', type: 'STRING', label: 'Brand' },
            { from: 'category', type: 'STRING', label: 'Category' },
            { from: 'color', type: 'STRING', label: 'Color' },
            { from: 'description', type: 'STRING', label: 'Description' },
            { from: 'price', type: 'NUMBER', label: 'Price' },
            { from: 'rating', type: 'NUMBER', label: 'Rating' },
            { from: 'url', type: 'STRING', label: 'URL' },
          ],
          search_fields: ['name', 'brand', 'category', 'description', 'sku'],
          filters: [{ key: 'sku' }, { key: 'brand' }, { key: 'category' }, { key: 'color' }, { key: 'price' }],
          facet_fields: ['brand', 'category', 'color'],
          sortable_fields: ['price', 'rating'],
          synonyms: [
            { synonyms: ['sofa', 'couch'] },
            { synonyms: ['t shirt', 'tee'] },
            { synonyms: ['headphones', 'headset'] },
            { root: 'tv', synonyms: ['television'] },
          ],
          stop_words: ['the', 'a', 'an'],
        },
      });
      this.expect(created, [201], 'create the search index');
    } else {
      this.expect(found, [200], 'read the search index');
    }
    this.note(found.status === 404, 'search index', DEMO.index);

    const counted = this.expect(
      await this.call('POST', `/api/instant/search/indexes/${DEMO.index}`, { data: [{ limit: 0 }] }),
      [201],
      'count the indexed products',
    );
    const count = counted.body.data[0].results[0].count as number;
    if (count !== this.products.length) {
      const documents = this.products.map(
        ({ id, sku, name, brand, category, color, price, rating, description, url }) => ({
          id,
          sku,
          name,
          brand,
          category,
          color,
          price,
          rating,
          description,
          url,
        }),
      );
      this.expect(
        await this.call('PUT', `/api/instant/indexes/${DEMO.index}/documents`, { data: documents }),
        [204],
        'upsert the products into the search index',
      );
    }
    this.note(count !== this.products.length, 'indexed', `${this.products.length} products`);
  }

  async searchEngine() {
    const proxy = await this.call('GET', `/api/storage/edge/proxies/${DEMO.proxyKey}`);
    if (proxy.status === 404) {
      const created = await this.call('POST', '/api/storage/edge/proxies', {
        data: { key: DEMO.proxyKey, routes: { path: '*', origin: { uri: 'https://shop.example.com' } } },
      });
      if (created.status === 409) {
        throw new ServiceError(`The proxy key "${DEMO.proxyKey}" belongs to another tenant: delete it there first.`);
      }
      this.expect(created, [201], 'create the proxy');
    } else {
      this.expect(proxy, [200], 'read the proxy');
    }
    this.note(proxy.status === 404, 'proxy key', `${DEMO.proxyKey} (public search engine)`);

    const settings = await this.call('GET', `/api/instant/search/${DEMO.proxyKey}/settings`);
    if (settings.status === 404) {
      const filter = (key: string, label: string) => ({ key, label, options_count: 8, max_options_count: 30 });
      this.expect(
        await this.call('PUT', `/api/instant/search/${DEMO.proxyKey}/settings`, {
          data: {
            indexes: [
              {
                alias: DEMO.index,
                template: { name: 'PRODUCTS' },
                filters: [filter('category', 'Category'), filter('brand', 'Brand'), filter('color', 'Color')],
                results_per_page: 12,
                sort_options: [
                  { label: 'Relevance', sort: [] },
                  { label: 'Price: low to high', sort: ['price:asc'] },
                  { label: 'Price: high to low', sort: ['price:desc'] },
                  { label: 'Best rated', sort: ['rating:desc'] },
                ],
              },
            ],
            filters: { show_for: DEMO.index, sorting: ['category', 'brand', 'color'] },
            is_autocomplete: true,
          },
        }),
        [200],
        'set the search settings',
      );
    } else {
      this.expect(settings, [200], 'read the search settings');
    }
    this.note(settings.status === 404, 'search settings', `facets category, brand, color; 4 sorts`);
  }

  /** The index named as the agents' catalog: the storefront catalog of the proxy key (UCP) serves it. */
  async agentsCatalog() {
    const found = await this.call('GET', '/api/agents/catalog');
    if (found.status === 404) {
      this.expect(
        await this.call('PUT', '/api/agents/catalog', {
          data: {
            index: DEMO.index,
            mapping: {
              product_id: 'sku',
              sku: 'sku',
              title: 'name',
              description: 'description',
              price: 'price',
              price_scale: 2,
              currency: 'EUR',
              categories: 'category',
              url: 'url',
            },
          },
        }),
        [200],
        'name the agents catalog',
      );
    } else {
      this.expect(found, [200], 'read the agents catalog');
    }
    this.note(
      found.status === 404,
      'agents catalog',
      `${DEMO.index} (UCP storefront catalog at /ucp/${DEMO.proxyKey})`,
    );
  }
}

/** The OAuth client and the user of the demo tenant, made with the master key. */
async function accounts(connection: Connection, report: DemoShopReport, state: SeedState) {
  const admin = (method: string, path: string, body?: unknown) =>
    callService(connection.baseUrl, method, `/api/admin/tenants/${state.tenantId}${path}`, {
      token: connection.masterKey,
      body,
    });
  const clients = await admin('GET', '/oauth-clients?page[size]=100');
  if (clients.status !== 200) throw answerError('list the OAuth clients', clients);
  let client = (clients.body.data as { client_id: string; name: string }[]).find((c) => c.name === DEMO.client);
  let secret: string | undefined;
  if (!client) {
    const created = await admin('POST', '/oauth-clients', {
      data: {
        name: DEMO.client,
        redirect_uris: ['https://shop.example.com/callback'],
        scopes: ['openid', 'search', 'catalog:read', 'inventory:read'],
        is_confidential: true,
      },
    });
    if (created.status !== 201) throw answerError('register the OAuth client', created);
    client = created.body.data;
    secret = created.body.data.client_secret;
  }
  report.note(
    secret !== undefined,
    'OAuth client',
    `${client!.client_id}${secret ? ` secret ${secret} (shown once)` : ' (its secret was shown when it was made)'}`,
  );

  const consoleClient = await ensureConsoleClient(connection, state.tenantId);
  report.note(consoleClient.created, 'console', `${consoleClient.url} (sign in as the user below)`);

  const users = await admin('GET', `/users?filter[email][eq]=${encodeURIComponent(DEMO.email)}`);
  if (users.status !== 200) throw answerError('find the user', users);
  const madeUser = users.body.data.length === 0;
  if (madeUser) {
    state.userPassword = randomBytes(12).toString('base64url');
    const created = await admin('POST', '/users', { data: { email: DEMO.email, password: state.userPassword } });
    if (created.status !== 201) throw answerError('create the user', created);
  }
  report.note(
    madeUser,
    'user',
    `${DEMO.email} password ${state.userPassword ?? '(set before; npm run admin -- user:password to change it)'}`,
  );
}

interface DemoShopReport {
  note(made: boolean, what: string, detail: string): void;
}

/** Makes what is missing of the demo shop; `state` is what an earlier run kept, if any. */
export async function seedDemoShop(
  connection: Connection,
  previous: SeedState | undefined,
  productCount = 1000,
): Promise<SeedReport> {
  const { baseUrl, masterKey } = connection;
  const admin = (method: string, path: string, body?: unknown) =>
    callService(baseUrl, method, path, { token: masterKey, body });
  const changes: string[] = [];
  const lines: string[] = [];

  let tenant = await findTenantByName(connection, DEMO.tenant);
  if (!tenant) {
    const created = await admin('POST', '/api/admin/tenants', { data: { name: DEMO.tenant } });
    if (created.status !== 201) throw answerError('create the demo tenant', created);
    tenant = created.body.data as { id: string };
    changes.push('tenant');
  }
  lines.push(`${'tenant'.padEnd(16)} ${tenant.id} ${DEMO.tenant}${changes.includes('tenant') ? ' (created)' : ''}`);

  // The key an earlier run issued, while it still works; otherwise a new one (a key is shown once).
  let apiKey = previous?.tenantId === tenant.id ? previous.apiKey : undefined;
  if (apiKey) {
    const probe = await callService(baseUrl, 'GET', `/api/instant/indexes?page[size]=1`, { token: apiKey });
    if (probe.status !== 200) apiKey = undefined;
  }
  if (!apiKey) {
    const issued = await admin('POST', `/api/admin/tenants/${tenant.id}/api-keys`, {
      data: { name: 'demo seed', scopes: ['*'] },
    });
    if (issued.status !== 201) throw answerError('issue the demo API key', issued);
    apiKey = issued.body.data.key as string;
    changes.push('API key');
  }
  lines.push(`${'API key'.padEnd(16)} ${apiKey}${changes.includes('API key') ? ' (created)' : ''}`);
  const state: SeedState = {
    tenantId: tenant.id,
    apiKey,
    userPassword: previous?.tenantId === tenant.id ? previous.userPassword : undefined,
  };

  const products = demoProducts(productCount);
  const shop = new DemoShop(connection, apiKey, products);
  const { businessId, channelId, warehouses } = await shop.catalog();
  await shop.stock(businessId, warehouses);
  await shop.searchIndex();
  await shop.searchEngine();
  await shop.agentsCatalog();
  await seedSelling(connection, apiKey, products, DEMO.channel, DEMO.warehouses[0], shop);
  await accounts(connection, shop, state);
  lines.push(...shop.lines);
  changes.push(...shop.changes);
  const ids = {
    TENANT_ID: tenant.id,
    BUSINESS_ID: businessId,
    CHANNEL_ID: channelId,
    WAREHOUSE_ID: warehouses[0]!.id,
    PROXY_KEY: DEMO.proxyKey,
  };
  return { lines, ids, changes, state };
}
