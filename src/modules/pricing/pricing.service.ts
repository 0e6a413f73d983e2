/**
 * Prices and tax: the writes of the back office (prices in bulk, tax zones) and the two reads the
 * checkout composes, `priceLines` (what each product costs in a channel) and `taxFor` (the tax of
 * a list of amounts at a destination). Amounts are integers in minor units throughout.
 */
import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db } from '../../kernel/db';
import { idTaken, notFound, type FieldProblem } from '../../kernel/errors';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import type { Principal } from '../../kernel/principal';
import { requireScope } from '../../kernel/scopes';
import { invalidInput } from '../../kernel/validation';
import { findSalesChannel } from '../catalog';
import * as repository from './pricing.repository';
import type { PriceKey, PriceWriteItem, TaxZoneInput } from './pricing.schemas';
import type { PriceLines, PriceRecord, TaxInput, TaxResult, TaxZoneRecord } from './pricing.types';
import { computeTax, noTax } from './tax';

/** A price as the REST interface answers it (timestamps as Unix milliseconds). */
export const priceView = (row: PriceRecord) => ({
  ...row,
  createdAt: row.createdAt.getTime(),
  updatedAt: row.updatedAt.getTime(),
});
export const taxZoneView = (row: TaxZoneRecord) => ({
  ...row,
  createdAt: row.createdAt.getTime(),
  updatedAt: row.updatedAt.getTime(),
});
export type PriceView = ReturnType<typeof priceView>;
export type TaxZoneView = ReturnType<typeof taxZoneView>;

const keyOf = (p: { productId: string; channelId?: string | null; currency: string }) =>
  `${p.productId}|${p.channelId ?? ''}|${p.currency}`;

export class PricingService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  // The face the checkout composes (no scope: the caller's operation checked it)

  /**
   * The price of each of `productIds` in a sales channel: the channel's override first, then the
   * product's price in the channel's currency; a product without either is absent from the map
   * (so is an id that is not a product of the tenant). NOT_FOUND for an unknown channel.
   */
  async priceLines(tenantId: string, input: { channelId: string; productIds: string[] }): Promise<PriceLines> {
    const channel = isUuid(input.channelId) ? await findSalesChannel(this.db, tenantId, input.channelId) : null;
    if (!channel) throw notFound(`no sales channel with id "${input.channelId}"`);
    const ids = [...new Set(input.productIds.filter(isUuid))];
    const rows =
      ids.length === 0 ? [] : await repository.channelPrices(this.db, tenantId, channel.id, channel.currency, ids);
    return {
      currency: channel.currency,
      taxInclusive: channel.taxInclusive,
      prices: new Map(
        rows.map((row) => [row.productId, { amount: row.amount, compareAt: row.compareAt, taxClass: row.taxClass }]),
      ),
    };
  }

  /**
   * The tax of each item at the destination (see `computeTax` for the rounding): the zone of the
   * destination's country and region, else of its country. No destination or no zone: zero tax
   * and no lines. Items with the same key add up.
   */
  async taxFor(tenantId: string, input: TaxInput): Promise<TaxResult> {
    if (input.destination === null) return noTax(input);
    const country = input.destination.country.toUpperCase();
    const zone = await repository.zoneFor(this.db, tenantId, country, input.destination.region ?? null);
    if (!zone) return noTax(input);
    return computeTax(zone.rates, input);
  }

  // Prices

  /** `priceLines` for a caller reading the catalog (GraphQL `Product.price(channel_id:)`). */
  async channelPrices(principal: Principal, channelId: string, productIds: string[]): Promise<PriceLines> {
    requireScope(principal, 'catalog:read');
    return this.priceLines(principal.tenantId, { channelId, productIds });
  }

  /** The prices of a product (every currency and channel) for the GraphQL `Product.prices`. */
  async pricesOfProducts(principal: Principal, productIds: readonly string[]): Promise<PriceRecord[]> {
    requireScope(principal, 'catalog:read');
    return repository.pricesOfProducts(this.db, principal.tenantId, productIds);
  }

  /** A page of the tenant's prices in creation order. */
  async listPrices(
    principal: Principal,
    filter: { productId?: string; channelId?: string; currency?: string },
    page: PageArguments,
    parameterNames?: { after: string; before: string },
  ) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    const scope = `prices:${tenantId}:${filter.productId ?? ''}:${filter.channelId ?? ''}:${filter.currency ?? ''}`;
    return paginate(
      this.cursors,
      scope,
      page,
      sqlKeysetSource(this.db, repository.priceList(tenantId, filter)),
      parameterNames,
    );
  }

  /**
   * Sets prices, all or none: every entry is checked first (a product of the tenant, a channel of
   * the tenant whose currency is the entry's, no entry twice), then all are written in one
   * statement. Setting a price that exists replaces its amount and compare-at price.
   */
  async setPrices(
    principal: Principal,
    entries: readonly PriceWriteItem[],
    idempotency?: Idempotency,
  ): Promise<PriceView[]> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    await this.checkPriceKeys(tenantId, entries, true);
    return writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () =>
        (
          await repository.upsertPrices(
            tx,
            tenantId,
            entries.map((entry) => ({
              id: uuidv7(),
              productId: entry.productId,
              channelId: entry.channelId ?? null,
              currency: entry.currency,
              amount: entry.amount,
              compareAt: entry.compareAt ?? null,
            })),
          )
        ).map(priceView),
      ),
    );
  }

  /** Removes prices, all named or none: NOT_FOUND (nothing removed) when one of them does not exist. */
  async removePrices(principal: Principal, keys: readonly PriceKey[]): Promise<number> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    await this.checkPriceKeys(tenantId, keys, false);
    const unique = [...new Map(keys.map((key) => [keyOf(key), key])).values()];
    return writeTransaction(this.db, async (tx) => {
      const removed = await repository.deletePrices(
        tx,
        tenantId,
        unique.map((key) => ({ productId: key.productId, channelId: key.channelId ?? null, currency: key.currency })),
      );
      if (removed !== unique.length) {
        throw notFound(
          `${unique.length - removed} of the ${unique.length} prices named do not exist; none was removed`,
        );
      }
      return removed;
    });
  }

  private async checkPriceKeys(
    tenantId: string,
    entries: readonly { productId: string; channelId?: string | null; currency: string }[],
    write: boolean,
  ) {
    const productIds = [...new Set(entries.map((entry) => entry.productId))];
    const channelIds = [...new Set(entries.flatMap((entry) => (entry.channelId ? [entry.channelId] : [])))];
    const [products, channels] = await Promise.all([
      repository.existingProducts(this.db, tenantId, productIds),
      channelIds.length === 0 ? new Map<string, string>() : repository.channelCurrencies(this.db, tenantId, channelIds),
    ]);
    const problems: FieldProblem[] = [];
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      if (problems.length >= 100) return;
      if (!products.has(entry.productId)) {
        problems.push({
          field: `[${index}].productId`,
          message: `"${entry.productId}" is not a product of the tenant`,
        });
      }
      if (entry.channelId) {
        const currency = channels.get(entry.channelId);
        if (currency === undefined) {
          problems.push({
            field: `[${index}].channelId`,
            message: `"${entry.channelId}" is not a sales channel of the tenant`,
          });
        } else if (write && currency !== entry.currency) {
          problems.push({ field: `[${index}].currency`, message: `must be the channel's currency ${currency}` });
        }
      }
      const key = keyOf(entry);
      if (write && seen.has(key)) {
        problems.push({
          field: `[${index}]`,
          message: 'sets the same product, channel and currency as an earlier entry',
        });
      }
      seen.add(key);
    });
    if (problems.length > 0) throw invalidInput(problems);
  }

  // Tax zones

  async listTaxZones(principal: Principal, page: PageArguments, parameterNames?: { after: string; before: string }) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    const result = await paginate(
      this.cursors,
      `tax-zones:${tenantId}`,
      page,
      sqlKeysetSource(this.db, repository.taxZoneList(tenantId)),
      parameterNames,
    );
    return { ...result, items: await repository.withRates(this.db, result.items) };
  }

  async getTaxZone(principal: Principal, id: string): Promise<TaxZoneRecord> {
    requireScope(principal, 'catalog:read');
    const zone = isUuid(id) ? await repository.findTaxZone(this.db, principal.tenantId, id) : undefined;
    if (!zone) throw notFound(`no tax zone with id "${id}"`);
    return zone;
  }

  /** Creates a zone with its rates; CONFLICT (ID_TAKEN) when the tenant has a zone for that country and region. */
  async createTaxZone(principal: Principal, input: TaxZoneInput, idempotency?: Idempotency): Promise<TaxZoneRecord> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    return this.zoneWrite(input, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          const id = uuidv7();
          await repository.insertTaxZone(tx, tenantId, { id, ...this.zoneColumns(input) });
          await repository.replaceTaxRates(tx, tenantId, id, this.ratesOf(input));
          return taxZoneView((await repository.findTaxZone(tx, tenantId, id))!);
        }),
      ),
    );
  }

  /** Replaces a zone: its name, place and rates (a full replace, like PUT). */
  async replaceTaxZone(
    principal: Principal,
    id: string,
    input: TaxZoneInput,
    idempotency?: Idempotency,
  ): Promise<TaxZoneRecord> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    if (!isUuid(id)) throw notFound(`no tax zone with id "${id}"`);
    return this.zoneWrite(input, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          if (!(await repository.updateTaxZone(tx, tenantId, { id, ...this.zoneColumns(input) }))) {
            throw notFound(`no tax zone with id "${id}"`);
          }
          await repository.replaceTaxRates(tx, tenantId, id, this.ratesOf(input));
          return taxZoneView((await repository.findTaxZone(tx, tenantId, id))!);
        }),
      ),
    );
  }

  async deleteTaxZone(principal: Principal, id: string): Promise<void> {
    requireScope(principal, 'pricing:write');
    if (!isUuid(id) || !(await repository.deleteTaxZone(this.db, principal.tenantId, id))) {
      throw notFound(`no tax zone with id "${id}"`);
    }
  }

  private zoneColumns = (input: TaxZoneInput) => ({
    name: input.name,
    country: input.country,
    region: input.region ?? null,
  });

  private ratesOf = (input: TaxZoneInput) =>
    input.rates.map((rate) => ({
      taxClass: rate.taxClass,
      name: rate.name ?? input.name,
      rateBasisPoints: rate.rateBasisPoints,
    }));

  /** Runs a zone write; the unique (country, region) violation becomes ID_TAKEN on `country`. The result is revived. */
  private async zoneWrite(input: TaxZoneInput, write: () => Promise<TaxZoneView>): Promise<TaxZoneRecord> {
    try {
      const view = await write();
      return { ...view, createdAt: new Date(view.createdAt), updatedAt: new Date(view.updatedAt) };
    } catch (error) {
      if (isUniqueViolation(error)) {
        const place = input.region ? `${input.country}-${input.region}` : input.country;
        throw idTaken(`${place} already has a tax zone`, 'country');
      }
      throw error;
    }
  }
}
