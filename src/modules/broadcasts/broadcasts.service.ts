import { createHmac } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import type { BroadcastConfig } from '../../kernel/config';
import { writeTransaction, type Db } from '../../kernel/db';
import { invalidState, notFound } from '../../kernel/errors';
import { isUuid } from '../../kernel/ids';
import { inSpan } from '../../kernel/tracing/spans';
import { isStorableText } from '../../kernel/validation';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as catalog from '../catalog';
import * as repository from './broadcasts.repository';
import type { SetSalesChannelWebhookInput } from './broadcasts.schemas';
import type { z } from 'zod';
import { postWebhook, WebhookAddressError, WebhookPrivateAddressError, WebhookTimeoutError } from './webhook-post';
import type { ClaimedDelivery, DeliverySubject, UnreadableDelivery } from './broadcasts.repository';
import * as orderEvents from './order-events.repository';

/** Deliveries one worker pass claims. */
const BATCH = 50;

/** The `type` of a stock event's delivery. */
const EVENT_TYPES = { STOCK_LOW: 'stock.low', STOCK_OUT: 'stock.out' } as const;

/**
 * The body posted to a channel: `stock.mutation`, the new quantity of a SKU at a warehouse, or
 * `stock.low` / `stock.out`, a fall of what is available there to the reorder point or to nothing.
 */
export function broadcastBody(delivery: ClaimedDelivery) {
  if (delivery.kind === 'event') {
    return JSON.stringify({
      type: EVENT_TYPES[delivery.type],
      delivery_id: delivery.id,
      stock_event_id: delivery.eventId,
      stock_mutation_id: delivery.causeMutationId,
      channel_id: delivery.channelId,
      sku: delivery.sku,
      product_id: delivery.productId,
      warehouse_id: delivery.warehouseId,
      available: Number(delivery.available),
      reorder_point: delivery.reorderPoint === null ? null : Number(delivery.reorderPoint),
      created_at: delivery.createdAt.getTime(),
    });
  }
  return JSON.stringify({
    type: 'stock.mutation',
    delivery_id: delivery.id,
    stock_mutation_id: delivery.mutationId,
    channel_id: delivery.channelId,
    sku: delivery.sku,
    product_id: delivery.productId,
    warehouse_id: delivery.warehouseId,
    position_id: delivery.positionId,
    source: delivery.source,
    delta: Number(delivery.delta),
    new_quantity: Number(delivery.newQuantity),
    created_at: delivery.createdAt.getTime(),
  });
}

/**
 * What follows the `attempts`-th attempt of a delivery: PROCESSED when the channel accepted it,
 * FAILING once `maxAttempts` were made, otherwise PENDING again after `backoffMs` doubled for
 * every attempt before this one.
 */
export function afterAttempt(
  config: Pick<BroadcastConfig, 'maxAttempts' | 'backoffMs'>,
  attempts: number,
  accepted: boolean,
) {
  if (accepted) return { status: 'PROCESSED', retryInMs: null } as const;
  if (attempts >= config.maxAttempts) return { status: 'FAILING', retryInMs: null } as const;
  return { status: 'PENDING', retryInMs: config.backoffMs * 2 ** (attempts - 1) } as const;
}

/** `sha256=<hex>`: HMAC-SHA256 of the raw body with the channel's secret. */
export const signature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A delivery that failed for a reason of its own (not the channel's answer), named with its tenant and subject. */
export class DeliveryFailed extends Error {
  /** What identifies the delivery, and nothing more: the report is logged, and the claimed row holds the secret. */
  readonly delivery: { id: string; tenantId: string } & DeliverySubject;

  constructor(
    { id, tenantId, mutationId, eventId }: DeliveryFailed['delivery'],
    reason: string,
    options?: ErrorOptions,
  ) {
    const subject = mutationId !== null ? `stock mutation ${mutationId}` : `stock event ${eventId}`;
    super(`delivery ${id} (tenant ${tenantId}, ${subject}): ${reason}`, options);
    this.delivery = {
      id,
      tenantId,
      ...(mutationId !== null ? { mutationId, eventId: null } : { mutationId, eventId }),
    };
  }
}

/** Channel broadcasts: webhooks of sales channels and the delivery of new stock quantities to them. */
export class BroadcastService {
  constructor(
    private readonly db: Db,
    private readonly config: BroadcastConfig,
  ) {}

  /** Sets (or replaces) the webhook a sales channel receives new stock quantities on. */
  async setSalesChannelWebhook(principal: Principal, input: z.output<typeof SetSalesChannelWebhookInput>) {
    requireScope(principal, 'catalog:write');
    const channel = isUuid(input.channel_id)
      ? await catalog.findSalesChannel(this.db, principal.tenantId, input.channel_id.toLowerCase())
      : null;
    if (!channel) throw notFound(`no sales channel with id "${input.channel_id}"`);
    await repository.setWebhook(this.db, principal.tenantId, channel.id, input.url, input.secret);
    return { channelId: channel.id, url: input.url };
  }

  /** Stops broadcasting to a sales channel; its deliveries that have not landed are dropped from their mutations. */
  async removeSalesChannelWebhook(principal: Principal, channelId: string) {
    requireScope(principal, 'catalog:write');
    if (
      !isUuid(channelId) ||
      !(await writeTransaction(this.db, (tx) =>
        repository.removeWebhook(tx, principal.tenantId, channelId.toLowerCase()),
      ))
    ) {
      throw notFound(`sales channel "${channelId}" has no webhook`);
    }
    return channelId.toLowerCase();
  }

  /** Sends the FAILING deliveries of a stock mutation again; it is PENDING until they land or fail again. */
  async retryStockMutation(principal: Principal, id: string) {
    requireScope(principal, 'inventory:write');
    return this.retry(principal.tenantId, 'stock mutation', id, (key) => ({ mutationId: key, eventId: null }));
  }

  /** Sends the FAILING deliveries of a stock event again; it is PENDING until they land or fail again. */
  async retryStockEvent(principal: Principal, id: string) {
    requireScope(principal, 'inventory:write');
    return this.retry(principal.tenantId, 'stock event', id, (key) => ({ mutationId: null, eventId: key }));
  }

  private async retry(tenantId: string, name: string, id: string, subjectOf: (id: string) => DeliverySubject) {
    const subject = subjectOf(id.toLowerCase());
    const status = isUuid(id) ? await repository.subjectStatus(this.db, tenantId, subject) : undefined;
    if (status === undefined) throw notFound(`no ${name} with id "${id}"`);
    const retried = await writeTransaction(this.db, (tx) => repository.retryFailing(tx, tenantId, subject));
    if (retried === 0) throw invalidState(`${name} "${id}" is ${status}; only a FAILING one can be retried`);
    return id.toLowerCase();
  }

  /**
   * Delivers what is due, one pass: claims deliveries (skipping those other processes hold),
   * posts each, and records what follows (see `afterAttempt`). Returns how many it attempted.
   * A delivery that fails otherwise (its row cannot be read or updated) fails alone: each such
   * failure goes to `report`, or, without one, all are thrown together once the pass is done.
   */
  async deliverDue(report?: (error: DeliveryFailed) => void): Promise<number> {
    // A claim outlasts any attempt, so that no other process sends the delivery meanwhile.
    const claimed = await repository.claimDue(this.db, BATCH, this.config.timeoutMs + 30_000);
    const outcomes = await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
    const failures = outcomes.filter((outcome) => outcome !== undefined);
    if (report) failures.forEach(report);
    else if (failures.length > 0) throw new AggregateError(failures, `${failures.length} deliveries failed`);
    return claimed.length + (await this.deliverDueOrderEvents());
  }

  /** One pass over the order events due: posted signed like stock broadcasts, retried with the same backoff. */
  private async deliverDueOrderEvents(): Promise<number> {
    const claimed = await orderEvents.claimDueOrderEvents(this.db, BATCH, this.config.timeoutMs + 30_000);
    await Promise.all(
      claimed.map(async (event) => {
        const body = JSON.stringify({
          type: event.type,
          delivery_id: event.id,
          order_id: event.orderId,
          channel_id: event.channelId,
          ...event.data,
          created_at: event.createdAt.getTime(),
        });
        const { accepted, message, final } = await this.send(event, body);
        const next = final
          ? ({ status: 'FAILING', retryInMs: null } as const)
          : afterAttempt(this.config, event.attempts, accepted);
        // Should the record fail, the claim runs out and a later pass tries again.
        await orderEvents.recordOrderEventAttempt(this.db, event.id, { ...next, message }).catch(() => undefined);
      }),
    );
    return claimed.length;
  }

  /**
   * One attempt of one delivery, traced in the trace of the write that queued it; what went wrong
   * with it is returned, so that it never stops the others.
   */
  private deliver(delivery: ClaimedDelivery | UnreadableDelivery): Promise<DeliveryFailed | undefined> {
    const attributes = { 'broadcast.delivery_id': delivery.id, 'broadcast.attempt': delivery.attempts };
    const parent = 'traceparent' in delivery ? delivery.traceparent : null;
    return inSpan('deliver broadcast', { kind: SpanKind.CONSUMER, attributes, parent }, () => this.attempt(delivery));
  }

  private async attempt(delivery: ClaimedDelivery | UnreadableDelivery): Promise<DeliveryFailed | undefined> {
    try {
      if ('problem' in delivery) {
        await this.record(delivery, false, 'not sent: its stored data is damaged');
        return new DeliveryFailed(delivery, `its row does not fit: ${delivery.problem}`);
      }
      const { accepted, message, final } = await this.post(delivery);
      await this.record(delivery, accepted, message, final);
      return undefined;
    } catch (error) {
      // A failed attempt, retried after its backoff (the channel may see it again: deliveries carry their id).
      // Should even that not be recorded, the claim runs out and a later pass tries again.
      await this.record(delivery, false, 'internal error').catch(() => undefined);
      return new DeliveryFailed(delivery, 'its attempt could not be made or recorded', { cause: error });
    }
  }

  /** Records an attempt; `final`: it can never succeed as configured (refused before sending), so no retry. */
  private record(
    delivery: { id: string; attempts: number } & DeliverySubject,
    accepted: boolean,
    message: string,
    final = false,
  ) {
    const next = final
      ? ({ status: 'FAILING', retryInMs: null } as const)
      : afterAttempt(this.config, delivery.attempts, accepted);
    return writeTransaction(this.db, (tx) => repository.recordAttempt(tx, delivery, { ...next, message }));
  }

  /**
   * One attempt: whether the channel accepted it (2xx), and what to tell the tenant about it;
   * `final` when it was refused before anything was sent (a private address), which retries cannot change.
   */
  private post(delivery: ClaimedDelivery) {
    return this.send(delivery, broadcastBody(delivery));
  }

  /** Posts a signed body to a channel's webhook (see `post`). */
  private async send(
    delivery: { id: string; attempts: number; url: string; secret: string },
    body: string,
  ): Promise<{ accepted: boolean; message: string; final?: boolean }> {
    const headers = {
      'content-type': 'application/json',
      'x-delivery-id': delivery.id,
      'x-delivery-attempt': String(delivery.attempts),
      'x-signature-256': signature(delivery.secret, body),
    };
    try {
      const { timeoutMs, allowPrivateWebhooks: allowPrivate } = this.config;
      const response = await postWebhook(delivery.url, headers, body, { timeoutMs, allowPrivate });
      const accepted = response.status >= 200 && response.status < 300;
      // The answer is shown to the tenant, unless it is text PostgreSQL refuses: then it would stop the recording.
      const answer = response.text.slice(0, 200);
      const shown = isStorableText(answer) ? `: ${answer}` : ' (answer not shown: not storable text)';
      return { accepted, message: `HTTP ${response.status}${accepted ? '' : shown}` };
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (error instanceof WebhookPrivateAddressError)
        return { accepted: false, message: `refused, not sent: ${e.message}`, final: true };
      const message =
        error instanceof WebhookTimeoutError
          ? (e.message ?? 'timed out')
          : error instanceof WebhookAddressError
            ? `refused: ${e.message}`
            : `not reachable: ${e.code ?? e.message}`;
      return { accepted: false, message };
    }
  }
}
