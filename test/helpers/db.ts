import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/**
 * Creates a fresh database cloned from the migrated template (or, with `migrated: false`, an empty
 * one that a service must migrate); returns its URL.
 */
export async function createTestDatabase({ migrated = true } = {}): Promise<string> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}${migrated ? ' TEMPLATE template_commerce' : ''}`);
  } finally {
    await client.end();
  }
  return adminUrl.replace(/\/[^/]+$/, `/${name}`);
}

/** Runs one SQL statement against a database, for assertions on stored state. */
export async function sql<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * One digest per table of every row in it, for "a refused request changed nothing": compare the
 * digests taken before and after it.
 */
export async function databaseDigest(url: string): Promise<Record<string, string>> {
  const tables = await sql<{ name: string }>(
    url,
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const union = tables
    .map(
      ({ name }) =>
        `SELECT '${name}' AS name, md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) AS digest FROM "${name}" r`,
    )
    .join(' UNION ALL ');
  const rows = await sql<{ name: string; digest: string }>(url, union);
  return Object.fromEntries(rows.map((row) => [row.name, row.digest]));
}
