import DataLoader from 'dataloader';

/**
 * DataLoaders live exactly as long as one GraphQL request: they are kept per context object (yoga
 * creates one per request and hands the same one to every resolver), so a page of nodes asking
 * for their warehouses costs one batched query and nothing is cached across requests or tenants.
 */
const loadersByRequest = new WeakMap<object, Map<string, DataLoader<unknown, unknown>>>();

/** The request's loader called `name`, created by `create` on first use. */
export function requestLoader<K, V>(context: object, name: string, create: () => DataLoader<K, V>): DataLoader<K, V> {
  let loaders = loadersByRequest.get(context);
  if (!loaders) {
    loaders = new Map();
    loadersByRequest.set(context, loaders);
  }
  let loader = loaders.get(name);
  if (!loader) {
    loader = create() as DataLoader<unknown, unknown>;
    loaders.set(name, loader);
  }
  return loader as DataLoader<K, V>;
}

/**
 * A loader of rows by id: `fetch` gets the distinct ids of one batch and returns the rows it
 * found in any order; a missing id loads as null.
 */
export function byIdLoader<V extends { id: string }>(
  fetch: (ids: readonly string[]) => Promise<V[]>,
): DataLoader<string, V | null> {
  return new DataLoader<string, V | null>(
    async (ids) => {
      const rows = new Map((await fetch(ids)).map((row) => [row.id, row]));
      return ids.map((id) => rows.get(id) ?? null);
    },
    { maxBatchSize: 500 },
  );
}
