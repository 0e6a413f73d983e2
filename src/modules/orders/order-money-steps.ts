/**
 * What happens to an order's money when the order changes: the payments module registers these
 * steps on the orders service (`setMoneySteps`), and the orders' own verbs run them in their
 * transaction, so that canceling an order with money voids or refunds its payment in the same
 * commit that releases its stock, and a return can refund.
 */
import type { Tx } from '../../kernel/db';
import type { OrderRecord } from './orders.repository';

export interface OrderMoneySteps {
  /** The order (with money) is being canceled; its stock is released already in `tx`. */
  canceled(tx: Tx, tenantId: string, order: OrderRecord): Promise<void>;
  /** Items of the order (with money) are being returned and `amount` is to be refunded. */
  refundReturn(tx: Tx, tenantId: string, order: OrderRecord, amount: number): Promise<void>;
}
