import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { CursorCodec } from '../../../src/kernel/cursor';
import type { Db } from '../../../src/kernel/db';
import type { Product } from '../../../src/__generated__/prisma/client';
import { single } from '../../../src/kernel/envelope';
import { listById } from '../../../src/modules/catalog/catalog.repository';
import { findProxy } from '../../../src/modules/proxies/proxies.repository';
import { toRecord } from '../../../src/modules/proxies/proxies.service';

export const PROXY_PATH_PREFIX = '/api/storage/edge/proxies/';
export const PRODUCTS_PAGE_SIZE = 10;

/**
 * The floor to compare the full stack against: the same two requests answered with the same
 * Prisma queries (the repository functions themselves) and the same response shapes, on bare
 * node:http. It deliberately does NOT authenticate, route generally, validate or parse GraphQL:
 * the tenant is fixed and the GraphQL body is read but ignored.
 */
export function createBareListener(db: Db, cursors: CursorCodec, tenantId: string): RequestListener {
  const proxy = async (res: ServerResponse, path: string) => {
    let key: string;
    try {
      key = decodeURIComponent(path.slice(PROXY_PATH_PREFIX.length));
    } catch {
      return send(res, 400, { error: 'bad key' });
    }
    const row = await findProxy(db, tenantId, key);
    return row ? send(res, 200, single(toRecord(row))) : send(res, 404, { error: 'not found' });
  };

  // What products(first: 10) costs without GraphQL: one findMany of size + 1 (to learn whether
  // another page follows) and a signed cursor per edge, computed as the catalog service does.
  const products = async (req: IncomingMessage, res: ServerResponse) => {
    await drain(req);
    const rows = await listById<Product>(db, 'product', { tenantId }).fetch({
      take: PRODUCTS_PAGE_SIZE + 1,
      backwards: false,
    });
    const items = rows.slice(0, PRODUCTS_PAGE_SIZE);
    const edges = items.map((row) => ({
      cursor: cursors.encode(`products:${tenantId}`, row.id),
      node: { id: row.id, name: row.name, sku: row.sku },
    }));
    const pageInfo = {
      hasNextPage: rows.length > PRODUCTS_PAGE_SIZE,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    };
    return send(res, 200, { data: { products: { edges, pageInfo } } });
  };

  return (req, res) => {
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    let handled: Promise<void>;
    if (req.method === 'GET' && path.startsWith(PROXY_PATH_PREFIX)) handled = proxy(res, path);
    else if (req.method === 'POST' && path === '/graphql') handled = products(req, res);
    else handled = Promise.resolve(send(res, 404, { error: 'not found' }));
    handled.catch((error: unknown) => {
      console.error('bare handler failed:', error);
      if (!res.headersSent) send(res, 500, { error: 'internal' });
      else res.destroy();
    });
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    req.on('end', resolve).on('error', reject);
    req.resume();
  });
}
