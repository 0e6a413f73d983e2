import type { Db } from '../../../kernel/db';
import { notFound } from '../../../kernel/errors';
import { invalidField } from '../../../kernel/validation';
import { requireScope } from '../../../kernel/scopes';
import type { Principal } from '../../../kernel/principal';
import * as proxies from '../../proxies';
import type { TrafficLog } from './traffic-log';
import * as repository from './traffic.repository';

const HOUR_MS = 3_600_000;
const DEFAULT_RANGE_MS = 24 * HOUR_MS;
/** The longest range one request reads: 31 days of hours. */
export const MAX_RANGE_HOURS = 31 * 24;

interface HourCounts {
  hits: number;
  misses: number;
  stale: number;
  bytes_served: number;
  bytes_from_origin: number;
  origin_errors: number;
}

export interface ProxyAnalytics {
  from: string;
  to: string;
  totals: HourCounts;
  hours: (HourCounts & { hour: string })[];
}

const noCounts = (): HourCounts => ({
  hits: 0,
  misses: 0,
  stale: 0,
  bytes_served: 0,
  bytes_from_origin: 0,
  origin_errors: 0,
});

/** The data plane's traffic per proxy and hour, as stored by every process. */
export class EdgeAnalyticsService {
  constructor(
    private readonly db: Db,
    private readonly traffic: TrafficLog,
  ) {}

  /**
   * Hits, misses, stale answers, bytes and origin errors of a tenant's proxy per hour over the whole
   * hours covering `[from, to)` (default: the last 24 hours), every hour listed, empty ones as zeros.
   */
  async forProxy(principal: Principal, key: string, range: { from?: string; to?: string }): Promise<ProxyAnalytics> {
    requireScope(principal, 'proxies:read');
    if (!(await proxies.tenantHoldsProxy(this.db, principal.tenantId, key))) {
      throw notFound(`no proxy with key "${key}"`);
    }
    const asked = range.to ? new Date(range.to) : new Date();
    const from = range.from ? new Date(range.from) : new Date(asked.getTime() - DEFAULT_RANGE_MS);
    if (from >= asked) throw invalidField('from', 'must be before to');
    const hours = {
      from: Math.floor(from.getTime() / HOUR_MS) * HOUR_MS,
      to: Math.ceil(asked.getTime() / HOUR_MS) * HOUR_MS,
    };
    if ((hours.to - hours.from) / HOUR_MS > MAX_RANGE_HOURS) {
      throw invalidField('from', `must be at most ${MAX_RANGE_HOURS} hours before to`);
    }
    // What this process counted and has not written yet counts too.
    await this.traffic.flush();
    const rows = await repository.trafficOf(this.db, principal.tenantId, key, new Date(hours.from), new Date(hours.to));
    const byHour = new Map(rows.map((row) => [row.hour.getTime(), row]));
    const totals = noCounts();
    const list: ProxyAnalytics['hours'] = [];
    for (let hour = hours.from; hour < hours.to; hour += HOUR_MS) {
      const row = byHour.get(hour);
      const counts = noCounts();
      for (const name of Object.keys(totals) as (keyof HourCounts)[]) {
        counts[name] = row?.[name] ?? 0;
        totals[name] += counts[name];
      }
      list.push({ hour: new Date(hour).toISOString(), ...counts });
    }
    return { from: new Date(hours.from).toISOString(), to: new Date(hours.to).toISOString(), totals, hours: list };
  }
}
