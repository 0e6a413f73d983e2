/** Storage of the data plane's traffic per proxy and hour. SQL only. */
import { z } from 'zod';
import type { Db } from '../../../kernel/db';
import { int8, parseRows } from '../../../kernel/rows';

/** What one process counted for a proxy in one hour since its last write. */
export interface TrafficCount {
  tenantId: string;
  proxyKey: string;
  /** Start of the hour (UTC). */
  hour: Date;
  hits: number;
  misses: number;
  stale: number;
  bytesServed: number;
  bytesFromOrigin: number;
  originErrors: number;
}

/**
 * Adds counts to the stored ones in one statement, in key order (the same in every process, so
 * that two writing the same rows wait for each other instead of deadlocking). Counts of a proxy
 * deleted or moved to another tenant meanwhile are dropped.
 */
export const addTrafficCounts = (db: Db, counts: TrafficCount[]) =>
  db.$executeRaw`
    INSERT INTO edge_proxy_traffic AS t
           (tenant_id, proxy_key, hour, hits, misses, stale, bytes_served, bytes_from_origin, origin_errors)
    SELECT r.tenant_id, r.proxy_key, r.hour, r.hits, r.misses, r.stale, r.bytes_served, r.bytes_from_origin,
           r.origin_errors
      FROM jsonb_to_recordset(${JSON.stringify(
        counts.map((c) => ({
          tenant_id: c.tenantId,
          proxy_key: c.proxyKey,
          hour: c.hour.toISOString(),
          hits: c.hits,
          misses: c.misses,
          stale: c.stale,
          bytes_served: c.bytesServed,
          bytes_from_origin: c.bytesFromOrigin,
          origin_errors: c.originErrors,
        })),
      )}::jsonb) AS r(tenant_id uuid, proxy_key text, hour timestamptz, hits bigint, misses bigint, stale bigint,
        bytes_served bigint, bytes_from_origin bigint, origin_errors bigint)
      JOIN proxies p ON p.key = r.proxy_key AND p.tenant_id = r.tenant_id
     ORDER BY r.proxy_key, r.hour
        ON CONFLICT (proxy_key, hour) DO UPDATE SET
           hits = t.hits + EXCLUDED.hits,
           misses = t.misses + EXCLUDED.misses,
           stale = t.stale + EXCLUDED.stale,
           bytes_served = t.bytes_served + EXCLUDED.bytes_served,
           bytes_from_origin = t.bytes_from_origin + EXCLUDED.bytes_from_origin,
           origin_errors = t.origin_errors + EXCLUDED.origin_errors`;

const trafficRow = z.object({
  hour: z.date(),
  hits: int8,
  misses: int8,
  stale: int8,
  bytes_served: int8,
  bytes_from_origin: int8,
  origin_errors: int8,
});
export type TrafficRow = z.output<typeof trafficRow>;

/** The stored hours of a tenant's proxy from `from` (inclusive) to `to` (exclusive), oldest first. */
export const trafficOf = async (db: Db, tenantId: string, proxyKey: string, from: Date, to: Date) =>
  parseRows(
    trafficRow,
    await db.$queryRaw`
      SELECT hour, hits, misses, stale, bytes_served, bytes_from_origin, origin_errors
        FROM edge_proxy_traffic
       WHERE tenant_id = ${tenantId}::uuid AND proxy_key = ${proxyKey} AND hour >= ${from} AND hour < ${to}
       ORDER BY hour`,
  );
