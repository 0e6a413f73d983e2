-- The warehouses a sales channel sells from, in priority order (setSalesChannelWarehouses). A link
-- goes with its channel or warehouse.
CREATE TABLE "channel_warehouses" (
    "channel_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "priority" INTEGER NOT NULL,
    CONSTRAINT "channel_warehouses_pkey" PRIMARY KEY ("channel_id", "warehouse_id")
);
CREATE UNIQUE INDEX "channel_warehouses_channel_id_priority_key" ON "channel_warehouses"("channel_id", "priority");
CREATE INDEX "channel_warehouses_warehouse_id_idx" ON "channel_warehouses"("warehouse_id");
CREATE INDEX "channel_warehouses_tenant_id_idx" ON "channel_warehouses"("tenant_id");
ALTER TABLE "channel_warehouses" ADD CONSTRAINT "channel_warehouses_channel_id_fkey"
    FOREIGN KEY ("channel_id") REFERENCES "sales_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "channel_warehouses" ADD CONSTRAINT "channel_warehouses_warehouse_id_fkey"
    FOREIGN KEY ("warehouse_id") REFERENCES "warehouses"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "channel_warehouses" ADD CONSTRAINT "channel_warehouses_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
