/**
 * The warehouses a sales channel sells from for one business, in priority order, and its allocation
 * strategy, kept in memory by every process: reservations through a channel need them on every
 * request. A database trigger announces every change on `SALES_CHANNEL_CHANGED`, whoever made it
 * (`notify-sales-channel-changes.sql`); each process then forgets the channel, and everything after
 * its listening connection was lost.
 */
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { DbOrTx } from '../../kernel/db';
import { isUuid } from '../../kernel/ids';
import { parseFirstRow, uuid } from '../../kernel/rows';
import { ALLOCATION_STRATEGIES, type AllocationStrategy } from './catalog.schemas';

/** The notification channel of sales channel changes; the payload is `<tenant id>:<channel id>`. */
export const SALES_CHANNEL_CHANGED = 'sales_channel_changed';

export interface ChannelWarehouses {
  /** The channel's warehouses of the business, in priority order; never empty. */
  warehouseIds: string[];
  strategy: AllocationStrategy;
}

const Found = z.object({ strategy: z.enum(ALLOCATION_STRATEGIES), warehouseIds: z.array(uuid) });

/** Channels with the business they were read for; the least recently used go first beyond the bound. */
const MAX_ENTRIES = 10_000;

export class ChannelWarehouseCache {
  private readonly entries = new LRUCache<string, ChannelWarehouses>({ max: MAX_ENTRIES });
  /** Bumped by every forget: a read that started before one is not kept, as it may be stale. */
  private generation = 0;

  constructor(private readonly db: DbOrTx) {}

  /**
   * The channel's warehouses of the business and its strategy; null when the channel or business
   * is not the tenant's or the channel sells from no warehouse of the business (not kept: the
   * caller reports the problem through the uncached path).
   */
  async get(tenantId: string, channelId: string, businessId: string): Promise<ChannelWarehouses | null> {
    if (!isUuid(channelId) || !isUuid(businessId)) return null;
    const key = `${tenantId}:${channelId.toLowerCase()}:${businessId.toLowerCase()}`;
    const cached = this.entries.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const rows = await this.db.$queryRaw<unknown[]>`
      SELECT c.allocation_strategy::text AS strategy,
             coalesce((SELECT array_agg(l.warehouse_id ORDER BY l.priority)
                         FROM channel_warehouses l JOIN warehouses w ON w.id = l.warehouse_id
                        WHERE l.tenant_id = c.tenant_id AND l.channel_id = c.id
                          AND w.business_id = ${businessId}::uuid), '{}') AS "warehouseIds"
        FROM sales_channels c WHERE c.tenant_id = ${tenantId}::uuid AND c.id = ${channelId}::uuid`;
    const found = parseFirstRow(Found, rows);
    if (!found || found.warehouseIds.length === 0) return null;
    if (generation === this.generation) this.entries.set(key, found);
    return found;
  }

  /** Forgets a channel (`<tenant id>:<channel id>`, the notification's payload), for every business. */
  forget(tenantChannel: string): void {
    this.generation += 1;
    const prefix = `${tenantChannel.toLowerCase()}:`;
    // The keys are collected first: lru-cache does not promise that iteration survives deletes.
    for (const key of [...this.entries.keys()].filter((candidate) => candidate.startsWith(prefix)))
      this.entries.delete(key);
  }

  /** Forgets everything, when changes may have gone unheard. */
  forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
