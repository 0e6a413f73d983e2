/**
 * Shipping methods: the back office's writes (per sales channel, with their rates and pickup
 * warehouses) and the face the checkout composes, `optionsFor`. Amounts are integers in minor
 * units of the channel's currency throughout.
 */
import type { CursorCodec } from '../../kernel/cursor';
import { writeTransaction, type Db } from '../../kernel/db';
import { notFound, type FieldProblem } from '../../kernel/errors';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import type { Principal } from '../../kernel/principal';
import { requireScope } from '../../kernel/scopes';
import { invalidInput, parseValue } from '../../kernel/validation';
import { findSalesChannel } from '../catalog';
import { fulfillmentOptions } from './fulfillment';
import * as repository from './shipping.repository';
import { FulfillmentQuerySchema, type ShippingMethodInput } from './shipping.schemas';
import type { FulfillmentOptionQuote, FulfillmentQuery, ShippingMethodRecord } from './shipping.types';

/** A method as the REST interface answers it (timestamps as Unix milliseconds). */
export const shippingMethodView = (row: ShippingMethodRecord) => ({
  ...row,
  createdAt: new Date(row.createdAt).getTime(),
  updatedAt: new Date(row.updatedAt).getTime(),
});
export type ShippingMethodView = ReturnType<typeof shippingMethodView>;

const revive = (view: ShippingMethodView): ShippingMethodRecord => ({
  ...view,
  createdAt: new Date(view.createdAt),
  updatedAt: new Date(view.updatedAt),
});

/** Shipping methods and pickup points are read with the catalog (scope catalog:read). */
const READ_SCOPE = 'catalog:read';

export class ShippingService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  // The face the checkout composes (no scope: the caller's operation checked it)

  /**
   * The fulfillment options that can serve the query's destination and all its items, in the
   * order and by the rules `fulfillmentOptions` describes; an empty array when nothing can.
   * NOT_FOUND for an unknown channel; a query that is not well formed (a quantity of 0, an amount
   * that is not a safe integer) is the caller's bug, a BAD_REQUEST.
   */
  async optionsFor(tenantId: string, query: FulfillmentQuery): Promise<FulfillmentOptionQuote[]> {
    const valid = parseValue(FulfillmentQuerySchema, query);
    const channel = isUuid(valid.channelId) ? await findSalesChannel(this.db, tenantId, valid.channelId) : null;
    if (!channel) throw notFound(`no sales channel with id "${valid.channelId}"`);
    if (valid.lines.some((line) => !isUuid(line.productId))) return [];
    return fulfillmentOptions(this.db, tenantId, channel, {
      ...valid,
      lines: valid.lines.map((line) => ({ ...line, productId: line.productId.toLowerCase() })),
    });
  }

  // The back office

  /** A page of the tenant's methods in creation order, optionally of one channel. */
  async listMethods(
    principal: Principal,
    filter: { channelId?: string },
    page: PageArguments,
    parameterNames?: { after: string; before: string },
  ) {
    requireScope(principal, READ_SCOPE);
    const { tenantId } = principal;
    return paginate(
      this.cursors,
      `shipping-methods:${tenantId}:${filter.channelId ?? ''}`,
      page,
      sqlKeysetSource(this.db, repository.methodList(tenantId, filter)),
      parameterNames,
    );
  }

  /** Every method of a channel (the GraphQL `shippingMethods(channel_id:)`); NOT_FOUND for an unknown channel. */
  async methodsOfChannel(principal: Principal, channelId: string): Promise<ShippingMethodRecord[]> {
    requireScope(principal, READ_SCOPE);
    const { tenantId } = principal;
    const channel = isUuid(channelId) ? await findSalesChannel(this.db, tenantId, channelId) : null;
    if (!channel) throw notFound(`no sales channel with id "${channelId}"`);
    return repository.methodsOfChannel(this.db, tenantId, channel.id, false);
  }

  async getMethod(principal: Principal, id: string): Promise<ShippingMethodRecord> {
    requireScope(principal, READ_SCOPE);
    const method = isUuid(id) ? await repository.findMethod(this.db, principal.tenantId, id) : undefined;
    if (!method) throw notFound(`no shipping method with id "${id}"`);
    return method;
  }

  async createMethod(
    principal: Principal,
    input: ShippingMethodInput,
    idempotency?: Idempotency,
  ): Promise<ShippingMethodRecord> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    await this.checkMethod(tenantId, input);
    const view = await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        const id = uuidv7();
        await repository.insertMethod(tx, tenantId, id, input);
        return shippingMethodView((await repository.findMethod(tx, tenantId, id))!);
      }),
    );
    return revive(view);
  }

  /** Replaces every field of a method (a full replace, like PUT). */
  async replaceMethod(
    principal: Principal,
    id: string,
    input: ShippingMethodInput,
    idempotency?: Idempotency,
  ): Promise<ShippingMethodRecord> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    if (!isUuid(id) || !(await repository.findMethod(this.db, tenantId, id))) {
      throw notFound(`no shipping method with id "${id}"`);
    }
    await this.checkMethod(tenantId, input);
    const view = await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        if (!(await repository.updateMethod(tx, tenantId, id, input))) {
          throw notFound(`no shipping method with id "${id}"`);
        }
        return shippingMethodView((await repository.findMethod(tx, tenantId, id))!);
      }),
    );
    return revive(view);
  }

  async deleteMethod(principal: Principal, id: string): Promise<void> {
    requireScope(principal, 'pricing:write');
    if (!isUuid(id) || !(await repository.deleteMethod(this.db, principal.tenantId, id))) {
      throw notFound(`no shipping method with id "${id}"`);
    }
  }

  /**
   * The rules a method's fields must meet together, every problem at once: a channel of the tenant;
   * a WEIGHT method has brackets and a FLAT one none; a PICKUP method names warehouses, each one of
   * the channel's, and a SHIPPING method none.
   */
  private async checkMethod(tenantId: string, input: ShippingMethodInput) {
    const problems: FieldProblem[] = [];
    const channel = await findSalesChannel(this.db, tenantId, input.channelId);
    if (!channel)
      problems.push({ field: 'channelId', message: `"${input.channelId}" is not a sales channel of the tenant` });
    if (input.rateKind === 'WEIGHT' && input.weightBrackets.length === 0) {
      problems.push({ field: 'weightBrackets', message: 'a WEIGHT rate needs at least one bracket' });
    }
    if (input.rateKind === 'FLAT' && input.weightBrackets.length > 0) {
      problems.push({ field: 'weightBrackets', message: 'only a WEIGHT rate has brackets' });
    }
    if (input.type === 'SHIPPING' && input.pickupWarehouseIds.length > 0) {
      problems.push({ field: 'pickupWarehouseIds', message: 'only a PICKUP method has pickup warehouses' });
    }
    if (input.type === 'PICKUP') {
      if (input.pickupWarehouseIds.length === 0) {
        problems.push({ field: 'pickupWarehouseIds', message: 'a PICKUP method needs at least one warehouse' });
      } else if (channel) {
        const ofChannel = new Set(
          (await repository.channelWarehouses(this.db, tenantId, channel.id)).map((warehouse) => warehouse.warehouseId),
        );
        const seen = new Set<string>();
        input.pickupWarehouseIds.forEach((warehouseId, index) => {
          if (!ofChannel.has(warehouseId)) {
            problems.push({
              field: `pickupWarehouseIds[${index}]`,
              message: `"${warehouseId}" is not a warehouse of the sales channel`,
            });
          } else if (seen.has(warehouseId)) {
            problems.push({ field: `pickupWarehouseIds[${index}]`, message: 'names a warehouse twice' });
          }
          seen.add(warehouseId);
        });
      }
    }
    if (problems.length > 0) throw invalidInput(problems.slice(0, 100));
  }
}
