-- An order some of whose items have shipped while others still wait (createShipment, or shipOrder
-- with backordered items left).
ALTER TYPE "order_status" ADD VALUE 'PARTIALLY_SHIPPED' BEFORE 'SHIPPED';
