/**
 * Backup and restore in embedded mode, with real processes: the service runs on a temporary
 * DATA_DIR under a write load of concurrent stock writers while `npm run admin -- backup` runs;
 * the file is restored into a fresh DATA_DIR, where the database must equal the source at the
 * backup's snapshot (not before it, not after it), and the service started on it must answer with
 * that data. Damaged files, a running service and an occupied target are refused untouched.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { embeddedDatabaseUrl, restoreDataDir } from '../../src/kernel/backup/embedded-data-dir';
import { qualifiedName } from '../../src/kernel/backup/backup-header';
import { readBackupHeader } from '../../src/kernel/backup/restore-backup';
import { startEmbeddedPostgres } from '../../src/kernel/embedded-postgres';
import { root, startServiceProcess, temporaryDir, type ServiceProcess } from '../helpers/service-process';

const execFileAsync = promisify(execFile);
const tsx = join(root, 'node_modules/.bin/tsx');
const url = (service: ServiceProcess, path: string) => `http://127.0.0.1:${service.port}${path}`;

/** `npm run admin -- <args>` with DATA_DIR, as an operator runs it: exit code and output. */
async function admin(dataDir: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await execFileAsync(tsx, ['scripts/admin.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function call(service: ServiceProcess, token: string | undefined, method: string, path: string, body?: unknown) {
  const response = await fetch(url(service, path), {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
}

async function graphqlId(service: ServiceProcess, token: string, mutation: string, input: object, field: string) {
  const type = `${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input`;
  const response = await call(service, token, 'POST', '/graphql', {
    query: `mutation($input: ${type}!) { ${mutation}(input: $input) { ${field} { id } } }`,
    variables: { input },
  });
  expect(response.body.errors, response.text).toBeUndefined();
  return response.body.data[mutation][field].id as string;
}

async function query<T extends pg.QueryResultRow>(databaseUrl: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const ledgerIds = async (databaseUrl: string) =>
  new Set((await query<{ id: string }>(databaseUrl, 'SELECT id FROM stock_mutations')).map((row) => row.id));

/** A digest of every table's rows, in a stable order, by qualified name. */
async function tableDigests(databaseUrl: string, tables: { schema: string; name: string }[]) {
  const digests = new Map<string, string>();
  for (const table of tables) {
    const [row] = await query<{ digest: string }>(
      databaseUrl,
      `SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS digest
         FROM ${qualifiedName(table)} t`,
    );
    digests.set(qualifiedName(table), row!.digest);
  }
  return digests;
}

/** On-hand quantity per product and warehouse. */
const onHand = async (databaseUrl: string) =>
  Object.fromEntries(
    (
      await query<{ key: string; quantity: string }>(
        databaseUrl,
        `SELECT product_id || '@' || warehouse_id AS key, sum(quantity)::text AS quantity
           FROM inventory_items GROUP BY 1`,
      )
    ).map((row) => [row.key, Number(row.quantity)]),
  );

async function waitForLedger(databaseUrl: string, atLeast: number) {
  await expect
    .poll(async () => (await ledgerIds(databaseUrl)).size, { timeout: 20_000, interval: 50 })
    .toBeGreaterThanOrEqual(atLeast);
}

const subset = (small: Set<string>, large: Set<string>) => [...small].every((id) => large.has(id));

describe('backup and restore of the embedded database', () => {
  it('backs up consistently under a write load, and a fresh DATA_DIR restored from it serves that data', async () => {
    const sourceDir = temporaryDir();
    const source = await startServiceProcess({ DATA_DIR: sourceDir });
    const masterKey = readFileSync(join(sourceDir, 'master.key'), 'utf8').trim();

    // A tenant with a key, a proxy with search settings, an index with documents, a catalog.
    const tenant = (await call(source, masterKey, 'POST', '/api/admin/tenants', { data: { name: 'Backed up' } })).body
      .data;
    const key = (
      await call(source, masterKey, 'POST', `/api/admin/tenants/${tenant.id}/api-keys`, {
        data: { name: 'backup test', scopes: ['*'] },
      })
    ).body.data.key as string;
    const index = { name: 'Products', alias: 'products', filters: [{ key: 'brand' }] };
    expect((await call(source, key, 'POST', '/api/instant/indexes', { data: index })).status).toBe(201);
    const documents = [
      { id: 'p1', name: 'Desk lamp', brand: 'Lumo' },
      { id: 'p2', name: 'Floor lamp', brand: 'Lumo' },
      { id: 'p3', name: 'Office chair', brand: 'Sitwell' },
    ];
    expect(
      (await call(source, key, 'PUT', '/api/instant/indexes/products/documents', { data: documents })).status,
    ).toBe(204);
    const proxy = { key: 'shop', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } };
    expect((await call(source, key, 'POST', '/api/storage/edge/proxies', { data: proxy })).status).toBe(201);
    const settings = {
      indexes: [{ alias: 'products', template: { name: 'PRODUCTS', mapping: [] }, filters: [], results_per_page: 10 }],
      filters: { show_for: 'products', sorting: [], options_count: 5, max_options_count: 10 },
      is_autocomplete: false,
    };
    expect((await call(source, key, 'PUT', '/api/instant/search/shop/settings', { data: settings })).status).toBe(200);
    const businessId = await graphqlId(source, key, 'createBusiness', { name: 'Shop' }, 'business');
    const warehouseId = await graphqlId(
      source,
      key,
      'createWarehouse',
      { business_id: businessId, name: 'Main' },
      'warehouse',
    );
    const skus = ['LOAD-1', 'LOAD-2', 'LOAD-3', 'LOAD-4'];
    for (const sku of skus) await graphqlId(source, key, 'createProduct', { sku, name: sku }, 'product');
    const signingKeys = (await call(source, undefined, 'GET', '/.well-known/jwks.json')).body.keys.map(
      (jwk: { kid: string }) => jwk.kid,
    );
    expect(signingKeys.length).toBeGreaterThan(0);

    const sourceUrl = embeddedDatabaseUrl(sourceDir);
    const tables = await query<{ schema: string; name: string }>(
      sourceUrl,
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    const digestsBeforeLoad = await tableDigests(sourceUrl, tables);

    // The write load: concurrent writers adding stock, each write one ledger row.
    let loading = true;
    const failures: string[] = [];
    const writers = Array.from({ length: 6 }, async (_, writer) => {
      for (let n = 0; loading; n += 1) {
        const entry = { sku: skus[(writer + n) % skus.length], warehouseId, businessId, quantity: 1 + (n % 3) };
        const response = await call(source, key, 'POST', '/api/inventory/items', { data: [entry] });
        if (response.status !== 201) failures.push(`${response.status} ${response.text}`);
      }
    });
    await waitForLedger(sourceUrl, 40);

    // A backup under a path that names a file fails at once, naming the file.
    const unwritable = await admin(sourceDir, 'backup', '--to', join(sourceDir, 'master.key', 'shop.backup'));
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toContain(
      `Cannot write the backup to ${join(sourceDir, 'master.key', 'shop.backup')}: a part of the path is not a directory`,
    );

    const before = await ledgerIds(sourceUrl);
    const backupFile = join(temporaryDir('commerce-backup-'), 'shop.backup');
    const backup = await admin(sourceDir, 'backup', '--to', backupFile);
    const after = await ledgerIds(sourceUrl);
    await waitForLedger(sourceUrl, after.size + 20);
    loading = false;
    await Promise.all(writers);
    expect(failures).toEqual([]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(readdirSync(dirname(backupFile))).toEqual(['shop.backup']);
    await expect(restoreDataDir(sourceDir, backupFile)).rejects.toThrow(/is running on .*stop the service/);
    const header = await readBackupHeader(backupFile);
    expect(JSON.parse(backup.stdout)).toMatchObject({
      file: backupFile,
      snapshot: header.snapshot,
      tables: tables.length,
    });

    // What the source held at the backup's snapshot. The ledger is append-only: its rows then are
    // those whose inserting transaction the snapshot sees (a fresh cluster: xid epoch 0). On hand
    // per product and warehouse was the new_quantity of the last of them.
    const final = await ledgerIds(sourceUrl);
    const atSnapshot = new Set(
      (
        await query<{ id: string }>(
          sourceUrl,
          'SELECT id FROM stock_mutations WHERE pg_visible_in_snapshot(xmin::text::xid8, $1::pg_snapshot)',
          [header.snapshot],
        )
      ).map((row) => row.id),
    );
    expect(subset(before, atSnapshot) && subset(atSnapshot, after)).toBe(true);
    expect(atSnapshot.size).toBeGreaterThan(before.size);
    expect(final.size).toBeGreaterThan(atSnapshot.size);
    const onHandAtSnapshot = Object.fromEntries(
      (
        await query<{ key: string; quantity: string }>(
          sourceUrl,
          `SELECT DISTINCT ON (product_id, warehouse_id) product_id || '@' || warehouse_id AS key, new_quantity::text AS quantity
             FROM stock_mutations WHERE pg_visible_in_snapshot(xmin::text::xid8, $1::pg_snapshot)
            ORDER BY product_id, warehouse_id, sequence DESC`,
          [header.snapshot],
        )
      ).map((row) => [row.key, Number(row.quantity)]),
    );
    expect(Object.keys(onHandAtSnapshot)).toHaveLength(skus.length);
    expect(onHandAtSnapshot).not.toEqual(await onHand(sourceUrl));
    // Tables the load did not write held then what they hold now.
    const digestsAfterLoad = await tableDigests(sourceUrl, tables);
    const untouched = [...digestsAfterLoad].filter(([name, digest]) => digestsBeforeLoad.get(name) === digest);
    expect(untouched.map(([name]) => name)).toEqual(
      expect.arrayContaining(['"public"."search_documents"', '"public"."proxies"', '"public"."oauth_signing_keys"']),
    );

    source.child.kill('SIGTERM');
    expect(await source.exited).toBe(0);

    // Damaged copies are refused before anything is touched.
    const backupBytes = readFileSync(backupFile);
    const truncated = join(dirname(backupFile), 'truncated.backup');
    writeFileSync(truncated, backupBytes.subarray(0, Math.floor(backupBytes.length * 0.7)));
    const corrupt = join(dirname(backupFile), 'corrupt.backup');
    const flipped = Buffer.from(backupBytes);
    flipped[Math.floor(flipped.length / 2)]! ^= 0x55;
    writeFileSync(corrupt, flipped);
    const untouchedDir = join(temporaryDir(), 'data');
    await expect(restoreDataDir(untouchedDir, truncated)).rejects.toThrow(/is truncated/);
    await expect(restoreDataDir(untouchedDir, corrupt)).rejects.toThrow(/is corrupt/);
    expect(existsSync(untouchedDir)).toBe(false);

    // The restore, into a fresh DATA_DIR that has the source's master key.
    const restoredDir = join(temporaryDir(), 'data');
    mkdirSync(restoredDir);
    copyFileSync(join(sourceDir, 'master.key'), join(restoredDir, 'master.key'));
    const restore = await admin(restoredDir, 'restore', '--from', backupFile);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stderr).not.toContain('master key');
    expect(JSON.parse(restore.stdout)).toMatchObject({ tables: tables.length, snapshot: header.snapshot });
    await expect(restoreDataDir(restoredDir, backupFile)).rejects.toThrow(/already holds a database.*--force/);

    // The restored database is the source at the snapshot.
    const restoredServer = await startEmbeddedPostgres(restoredDir);
    try {
      const restoredUrl = restoredServer.url;
      expect(await ledgerIds(restoredUrl)).toEqual(atSnapshot);
      expect(await onHand(restoredUrl)).toEqual(onHandAtSnapshot);
      // Every line's ledger chains: each new_quantity is the one before plus its delta.
      const broken = await query(
        restoredUrl,
        `SELECT id FROM (SELECT id, delta, new_quantity,
                                lag(new_quantity, 1, 0::bigint) OVER (PARTITION BY product_id, warehouse_id ORDER BY sequence) AS previous
                           FROM stock_mutations) chain
          WHERE previous + delta <> new_quantity`,
      );
      expect(broken).toEqual([]);
      const restoredDigests = await tableDigests(restoredUrl, tables);
      for (const [name, digest] of untouched) expect(restoredDigests.get(name), name).toBe(digest);
      const [sequence] = await query<{ ahead: boolean }>(
        restoredUrl,
        `SELECT pg_sequence_last_value(pg_get_serial_sequence('stock_mutations', 'sequence')::regclass)
                  >= (SELECT max(sequence) FROM stock_mutations) AS ahead`,
      );
      expect(sequence!.ahead).toBe(true);
    } finally {
      await restoredServer.stop();
    }

    // The service on the restored DATA_DIR answers with the restored data.
    const restored = await startServiceProcess({ DATA_DIR: restoredDir });
    expect((await call(restored, undefined, 'GET', '/healthz')).body).toEqual({ status: 'ok', database: 'up' });
    const gotProxy = await call(restored, key, 'GET', '/api/storage/edge/proxies/shop');
    expect(gotProxy.status, gotProxy.text).toBe(200);
    expect(gotProxy.body.data.key).toBe('shop');
    const search = await call(restored, undefined, 'POST', '/api/instant/search/shop', { data: [{ q: 'lamp' }] });
    expect(search.status, search.text).toBe(201);
    expect(search.body.data[0].results[0].hits.map((hit: { id: string }) => hit.id).sort()).toEqual(['p1', 'p2']);
    const restoredKeys = (await call(restored, undefined, 'GET', '/.well-known/jwks.json')).body.keys;
    expect(restoredKeys.map((jwk: { kid: string }) => jwk.kid)).toEqual(signingKeys);
    // Writing goes on from the restored sequences.
    const write = await call(restored, key, 'POST', '/api/inventory/items', {
      data: [{ sku: 'LOAD-1', warehouseId, businessId, quantity: 1 }],
    });
    expect(write.status, write.text).toBe(201);
    restored.child.kill('SIGTERM');
    expect(await restored.exited).toBe(0);
  }, 120_000);
});
