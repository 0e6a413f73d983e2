/** A digest of every row a tenant owns, for "no request changed another tenant's data". */
import { sql } from '../helpers/db';

/** The tenant's rows in every table that has a tenant, and its index documents, each table as one digest. */
export async function tenantRows(databaseUrl: string, tenantId: string): Promise<Record<string, string>> {
  const tables = await sql<{ name: string }>(
    databaseUrl,
    `SELECT table_name AS name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name`,
  );
  const digest = async (query: string) => (await sql<{ digest: string }>(databaseUrl, query, [tenantId]))[0]!.digest;
  const rows: Record<string, string> = {};
  for (const { name } of tables) {
    rows[name] = await digest(
      `SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) AS digest FROM "${name}" r
        WHERE tenant_id = $1`,
    );
  }
  rows.tenants = await digest(`SELECT md5(t::text) AS digest FROM tenants t WHERE id = $1`);
  rows.search_documents = await digest(
    `SELECT md5(coalesce(string_agg(d::text, '|' ORDER BY d::text), '')) AS digest
       FROM search_documents d JOIN search_indexes i ON i.id = d.index_id WHERE i.tenant_id = $1`,
  );
  return rows;
}
