-- How an order or reservation that names a sales channel but no warehouse is spread over the
-- channel's warehouses, unless the request chooses another strategy.
CREATE TYPE "allocation_strategy" AS ENUM ('PRIORITY', 'MOST_STOCK', 'SINGLE_WAREHOUSE');
ALTER TABLE "sales_channels" ADD COLUMN "allocation_strategy" "allocation_strategy" NOT NULL DEFAULT 'PRIORITY';
