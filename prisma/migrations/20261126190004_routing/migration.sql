-- Two more ways to spread an order or reservation over a sales channel's warehouses: the fewest
-- warehouses that can serve it whole, and the warehouses nearest its destination first.
ALTER TYPE "allocation_strategy" ADD VALUE 'FEWEST_SHIPMENTS';
ALTER TYPE "allocation_strategy" ADD VALUE 'CLOSEST';

-- Where a warehouse is: a point (both or neither) and its country (ISO 3166-1 alpha-2).
ALTER TABLE "warehouses" ADD COLUMN "latitude" DOUBLE PRECISION;
ALTER TABLE "warehouses" ADD COLUMN "longitude" DOUBLE PRECISION;
ALTER TABLE "warehouses" ADD COLUMN "country_code" TEXT;
ALTER TABLE "warehouses" ADD CONSTRAINT "warehouses_location_check" CHECK (
    ("latitude" IS NULL) = ("longitude" IS NULL)
    AND ("latitude" IS NULL OR "latitude" BETWEEN -90 AND 90)
    AND ("longitude" IS NULL OR "longitude" BETWEEN -180 AND 180)
    AND ("country_code" IS NULL OR "country_code" ~ '^[A-Z]{2}$'));
