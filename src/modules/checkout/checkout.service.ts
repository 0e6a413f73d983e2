/**
 * Checkouts: create, update (a full replace of what the buyer chose, as UCP's update is), read,
 * complete into an order and cancel. Every change recomputes the totals and messages and renews
 * the expiry; the lines' units are held from the first change to the order (see checkout-holds).
 *
 * A change is written in up to two steps: first the lines with the ids of the holds about to be
 * made and the holds about to go (so that a process stopped in between leaves every hold named by
 * its checkout), then the outcome. Each write is conditional on the version read, so that two
 * changes of one checkout never both land: the second is a CONFLICT to send again.
 */
import { writeTransaction } from '../../kernel/db';
import { conflict, invalidState, notFound } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { uuidv7 } from '../../kernel/ids';
import type { Principal } from '../../kernel/principal';
import { requireScope } from '../../kernel/scopes';
import { invalidInput } from '../../kernel/validation';
import { productsBySkus } from '../catalog';
import type { Services } from '../context';
import { completeInProgress } from './checkout-completion';
import { applyDiscounts, chooseFulfillment } from './checkout-composition';
import { applyHolds, planHolds, releaseHolds } from './checkout-holds';
import { lineMessage, missingMessages, priceCheckout, statusOf } from './checkout-totals';
import { toView, type CheckoutView } from './checkout-view';
import * as repository from './checkout.repository';
import type { CheckoutChoices, CreateCheckoutInput, UpdateCheckoutInput } from './checkout.schemas';
import { FINAL_STATUSES, type CheckoutLine, type CheckoutMessage, type CheckoutRecord } from './checkout.types';

/** How long a completion may stay in progress before a read takes it for one that stopped. */
const STALE_COMPLETION_MS = 2 * 60_000;

const OPEN_STATUSES = new Set(['incomplete', 'ready_for_complete', 'requires_escalation']);

export class CheckoutService {
  /** Checkouts this process marked canceled at their expiry, since it started. */
  expiredMarked = 0;

  constructor(private readonly services: Services) {}

  private get ttlMs() {
    return this.services.config.checkoutTtlMinutes * 60_000;
  }

  /** Creates a checkout (a cart, until it has a buyer) from the buyer's choices, holding its lines. */
  async createCheckout(principal: Principal, input: CreateCheckoutInput, idempotency?: Idempotency) {
    requireScope(principal, 'checkout:write');
    return this.once(principal.tenantId, idempotency, async () => {
      const { business_id: businessId, channel_id: channelId, idempotency_key: _key, ...choices } = input;
      const id = uuidv7();
      return this.apply(principal, { id, businessId, channelId, current: null }, choices);
    });
  }

  /** Replaces everything the buyer chose (UCP's update is a full replace: what is left out is cleared). */
  async updateCheckout(principal: Principal, input: UpdateCheckoutInput, idempotency?: Idempotency) {
    requireScope(principal, 'checkout:write');
    return this.once(principal.tenantId, idempotency, async () => {
      const { id, idempotency_key: _key, ...choices } = input;
      const current = await this.open(principal.tenantId, id);
      return this.apply(
        principal,
        { id, businessId: current.businessId, channelId: current.channelId, current },
        choices,
      );
    });
  }

  async checkout(principal: Principal, id: string): Promise<CheckoutView> {
    requireScope(principal, 'checkout:write');
    return toView(await this.load(principal.tenantId, id));
  }

  /** Cancels an open checkout and releases its holds. */
  async cancelCheckout(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'checkout:write');
    return this.once(principal.tenantId, idempotency, async () => {
      const { tenantId } = principal;
      const current = await this.load(tenantId, id);
      if (FINAL_STATUSES.has(current.status) || current.status === 'complete_in_progress')
        throw invalidState(`checkout "${id}" is ${current.status} and cannot be canceled`, 'id');
      const holds = current.lines.flatMap((line) => (line.holdId ? [line.holdId] : []));
      const canceled = {
        ...current,
        status: 'canceled' as const,
        lines: current.lines.map((line) => ({ ...line, holdId: null })),
        messages: [],
        pendingReleases: [...current.pendingReleases, ...holds],
      };
      if (!(await repository.updateCheckout(this.services.db, tenantId, id, current.version, canceled)))
        throw conflict(`checkout "${id}" changed meanwhile; send the request again`);
      await releaseHolds(this.services.reservations, principal, canceled.pendingReleases);
      await repository.updateCheckout(this.services.db, tenantId, id, current.version + 1, {
        ...canceled,
        pendingReleases: [],
      });
      return toView(await this.load(tenantId, id));
    });
  }

  /**
   * Turns a ready checkout into an order (see checkout-completion: payment authorized, then one
   * transaction). A declined payment, a discount at its limit or a hold that ended answer the
   * checkout open again with a message; a handler that needs the buyer answers it in
   * `requires_escalation` (complete again once the buyer acted at `continue_url`).
   */
  async completeCheckout(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'checkout:write');
    return this.once(principal.tenantId, idempotency, async () => {
      const { tenantId } = principal;
      const { db } = this.services;
      const current = await this.load(tenantId, id);
      if (current.status !== 'ready_for_complete' && current.status !== 'requires_escalation') {
        const first = current.messages.find((message) => message.type === 'error');
        const why = first ? `: ${first.content}` : '';
        throw invalidState(`checkout "${id}" is ${current.status} and cannot be completed${why}`, first?.path ?? 'id');
      }
      const inProgress = { ...current, status: 'complete_in_progress' as const };
      if (!(await repository.updateCheckout(db, tenantId, id, current.version, inProgress)))
        throw conflict(`checkout "${id}" changed meanwhile; send the request again`);
      const version = current.version + 1;
      let done;
      try {
        done = await completeInProgress(this.services, principal, inProgress, version);
      } catch (error) {
        await repository.updateCheckout(db, tenantId, id, version, { ...current, status: 'ready_for_complete' });
        throw error;
      }
      if (done.outcome === 'open') {
        const messages = done.message ? [...current.messages, done.message] : current.messages;
        const back = { ...current, status: statusOf(messages), messages, continueUrl: null };
        if ((await repository.updateCheckout(db, tenantId, id, version, back)) && done.reapply) {
          const again = await this.load(tenantId, id);
          await this.apply(principal, { ...again, current: again }, choicesOf(again), done.message);
        }
      }
      return toView(await this.load(tenantId, id));
    });
  }

  /**
   * Marks open checkouts past their expiry canceled (every process runs this; each is marked
   * once, by a conditional write). Their holds expired with them, released by the reservations'
   * sweeper. Returns how many this call marked.
   */
  async markExpired(limit = 100): Promise<number> {
    let marked = 0;
    for (const { tenantId, id } of await repository.expiredCheckouts(this.services.db, limit)) {
      const current = await repository.findCheckout(this.services.db, tenantId, id);
      if (current && (await this.expire(tenantId, current))) marked++;
    }
    this.expiredMarked += marked;
    return marked;
  }

  // Internals

  /** `work` once per idempotency key: a repeat answers what the first request answered. */
  private async once(tenantId: string, idempotency: Idempotency | undefined, work: () => Promise<CheckoutView>) {
    if (!idempotency) return work();
    return writeTransaction(this.services.db, (tx) => runIdempotent(tx, tenantId, idempotency, work), {
      timeout: 120_000,
    });
  }

  /** A checkout of the tenant as it is now: one past its expiry reads (and is marked) canceled. */
  private async load(tenantId: string, id: string): Promise<CheckoutRecord> {
    const found = await repository.findCheckout(this.services.db, tenantId, id);
    if (!found) throw notFound(`no checkout with id "${id}"`);
    if (await this.expire(tenantId, found)) return this.load(tenantId, id);
    if (found.status === 'complete_in_progress' && found.updatedAt.getTime() < Date.now() - STALE_COMPLETION_MS) {
      // A completion whose process stopped before its transaction committed: it placed no order.
      await repository.updateCheckout(this.services.db, tenantId, id, found.version, {
        ...found,
        status: statusOf(found.messages),
      });
      return this.load(tenantId, id);
    }
    return found;
  }

  /** An open checkout, else INVALID_STATE. */
  private async open(tenantId: string, id: string) {
    const current = await this.load(tenantId, id);
    if (!OPEN_STATUSES.has(current.status))
      throw invalidState(`checkout "${id}" is ${current.status} and cannot be changed`, 'id');
    return current;
  }

  /** Marks an open checkout past its expiry canceled; true when this call did. */
  private async expire(tenantId: string, found: CheckoutRecord): Promise<boolean> {
    if (!OPEN_STATUSES.has(found.status) || found.expiresAt.getTime() > Date.now()) return false;
    const expired: CheckoutMessage = {
      type: 'info',
      code: 'expired',
      path: '$.expires_at',
      content: 'The checkout expired and its stock is no longer held.',
      severity: null,
    };
    return repository.updateCheckout(this.services.db, tenantId, found.id, found.version, {
      ...found,
      status: 'canceled',
      lines: found.lines.map((line) => ({ ...line, holdId: null })),
      messages: [expired],
    });
  }

  /**
   * Resolves, holds and prices the buyer's choices and writes the checkout (new, or `current`
   * replaced). Problems of the buyer's making are messages, not errors.
   */
  private async apply(
    principal: Principal,
    keys: { id: string; businessId: string; channelId: string; current: CheckoutRecord | null },
    choices: CheckoutChoices,
    /** Why the checkout is applied again (a completion that could not be made), shown with the rest. */
    because: CheckoutMessage | null = null,
  ): Promise<CheckoutView> {
    const { tenantId } = principal;
    const { db, pricing, reservations } = this.services;
    const { current } = keys;
    const wanted = await this.resolveLines(tenantId, choices, current?.lines ?? []);
    const priced = await pricing.priceLines(tenantId, {
      channelId: keys.channelId,
      productIds: wanted.flatMap((line) => (line.productId ? [line.productId] : [])),
    });
    const messages: CheckoutMessage[] = [];
    const lines = wanted.map((line, index) => {
      if (line.productId === null) {
        messages.push(lineMessage.unknownProduct(index, line.reference));
        return line;
      }
      const price = priced.prices.get(line.productId);
      if (!price) messages.push(lineMessage.noPrice(index, line.sku!));
      return { ...line, unitPrice: price?.amount ?? null, taxClass: price?.taxClass ?? line.taxClass };
    });
    const buyer = choices.buyer
      ? {
          email: choices.buyer.email ?? null,
          firstName: choices.buyer.first_name ?? null,
          lastName: choices.buyer.last_name ?? null,
          fullName: choices.buyer.full_name ?? null,
          phoneNumber: choices.buyer.phone_number ?? null,
        }
      : null;
    const destination = choices.destination
      ? {
          country: choices.destination.country,
          region: choices.destination.region ?? null,
          postalCode: choices.destination.postal_code ?? null,
        }
      : null;
    const discounted = await applyDiscounts(this.services, tenantId, {
      channelId: keys.channelId,
      currency: priced.currency,
      codes: choices.discount_codes ?? [],
      buyerEmail: buyer?.email ?? null,
      lines,
    });
    const fulfillment = await chooseFulfillment(this.services, tenantId, {
      channelId: keys.channelId,
      currency: priced.currency,
      destination,
      lines: discounted.lines,
      chosenId: choices.fulfillment_option_id ?? null,
    });
    const expiresAt = new Date(Date.now() + this.ttlMs);
    const plan = planHolds(
      current?.lines ?? [],
      discounted.lines,
      (line) => line.productId !== null && line.unitPrice !== null,
    );
    const base = {
      status: 'incomplete' as const,
      currency: priced.currency,
      taxInclusive: priced.taxInclusive,
      buyer,
      destination,
      lines: plan.lines,
      discountCodes: choices.discount_codes ?? [],
      fulfillmentOptionId: fulfillment.chosen?.id ?? null,
      fulfillmentOptions: fulfillment.options,
      appliedDiscounts: discounted.applied,
      payment: choices.payment ? { handler: choices.payment.handler, token: choices.payment.token ?? null } : null,
      totals: { subtotal: 0, discount: 0, fulfillment: 0, tax: 0, total: 0 },
      taxLines: [],
      messages: [],
      pendingReleases: [...(current?.pendingReleases ?? []), ...plan.released],
      orderId: null,
      continueUrl: null,
      expiresAt,
    };
    // Step one: name the holds about to be made and about to go.
    let version: number;
    if (current === null) {
      await repository.insertCheckout(
        db,
        tenantId,
        { id: keys.id, businessId: keys.businessId, channelId: keys.channelId },
        base,
      );
      version = 0;
    } else {
      if (!(await repository.updateCheckout(db, tenantId, keys.id, current.version, base)))
        throw conflict(`checkout "${keys.id}" changed meanwhile; send the request again`);
      version = current.version + 1;
    }
    await releaseHolds(reservations, principal, base.pendingReleases);
    const held = await applyHolds(
      reservations,
      {
        principal,
        checkoutId: keys.id,
        businessId: keys.businessId,
        channelId: keys.channelId,
        buyerName: (buyer && buyerNameOf(buyer)) ?? `Checkout ${keys.id}`,
        buyerEmail: buyer?.email ?? null,
        expiresAt,
      },
      plan,
    );
    const money = await priceCheckout(pricing, tenantId, {
      lines: held.lines,
      destination,
      taxInclusive: priced.taxInclusive,
      fulfillment: fulfillment.chosen?.amount ?? 0,
    });
    const all = [
      ...(because ? [because] : []),
      ...messages,
      ...discounted.messages,
      ...fulfillment.messages,
      ...held.messages,
      ...missingMessages({
        lines: held.lines,
        buyer,
        destination,
        fulfillmentRequired: fulfillment.options.length > 0,
        fulfillmentOptionId: base.fulfillmentOptionId,
        payment: base.payment,
      }),
    ];
    const outcome = {
      ...base,
      ...money,
      messages: all,
      status: statusOf(all),
      pendingReleases: [],
    };
    // Step two: the outcome. A change that came in between wins; this one's new holds go.
    if (!(await repository.updateCheckout(db, tenantId, keys.id, version, outcome))) {
      const now = await repository.findCheckout(db, tenantId, keys.id);
      const named = new Set(now?.lines.map((line) => line.holdId));
      const made = held.lines.flatMap((line) => (line.holdId && !named.has(line.holdId) ? [line.holdId] : []));
      await releaseHolds(reservations, principal, made);
      throw conflict(`checkout "${keys.id}" changed meanwhile; send the request again`);
    }
    return toView(await this.load(tenantId, keys.id));
  }

  /** The lines as the buyer named them, each with its product (null when unknown), in order. */
  private async resolveLines(tenantId: string, choices: CheckoutChoices, current: CheckoutLine[]) {
    const ids = choices.line_items.flatMap((line) => (line.product_id ? [line.product_id] : []));
    const skus = choices.line_items.flatMap((line) => (line.sku ? [line.sku] : []));
    const products = [
      ...(ids.length ? await this.services.catalog.productsByIds(tenantId, ids) : []),
      ...(skus.length ? await productsBySkus(this.services.db, tenantId, skus) : []),
    ];
    const seen = new Map<string, number>();
    const problems: { field: string; message: string }[] = [];
    const lines = choices.line_items.map((input, index): CheckoutLine => {
      const product = products.find((p) => (input.product_id ? p.id === input.product_id : p.sku === input.sku));
      if (product) {
        const other = seen.get(product.id);
        if (other !== undefined)
          problems.push({ field: `line_items[${index}]`, message: `names the product of line_items[${other}]` });
        seen.set(product.id, index);
      }
      const reference = (input.product_id ?? input.sku)!;
      return {
        id: current.find((line) => product && line.productId === product.id)?.id ?? uuidv7(),
        reference,
        productId: product?.id ?? null,
        sku: product?.sku ?? input.sku ?? null,
        title: product?.name ?? null,
        quantity: input.quantity,
        taxClass: (product?.taxClass ?? 'standard') as CheckoutLine['taxClass'],
        unitPrice: null,
        discount: 0,
        tax: 0,
        holdId: null,
      };
    });
    if (problems.length > 0) throw invalidInput(problems);
    return lines;
  }
}

const buyerNameOf = (buyer: NonNullable<CheckoutRecord['buyer']>) =>
  buyer.fullName ?? ([buyer.firstName, buyer.lastName].filter(Boolean).join(' ') || null);

/** A checkout's choices as an update would send them, to apply them again. */
function choicesOf(checkout: CheckoutRecord): CheckoutChoices {
  return {
    line_items: checkout.lines.map((line) =>
      line.productId
        ? { product_id: line.productId, quantity: line.quantity }
        : { sku: line.reference, quantity: line.quantity },
    ),
    buyer: checkout.buyer && {
      email: checkout.buyer.email,
      first_name: checkout.buyer.firstName,
      last_name: checkout.buyer.lastName,
      full_name: checkout.buyer.fullName,
      phone_number: checkout.buyer.phoneNumber,
    },
    destination: checkout.destination && {
      country: checkout.destination.country,
      region: checkout.destination.region,
      postal_code: checkout.destination.postalCode,
    },
    discount_codes: checkout.discountCodes,
    fulfillment_option_id: checkout.fulfillmentOptionId,
    payment: checkout.payment,
  };
}
