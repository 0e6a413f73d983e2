-- A bundle (a kit) is a product sold as a set of component products, each a number of times. It has
-- no inventory lines of its own: its stock is its components'. `is_bundle` lets every stock write
-- refuse a bundle from the product row it already reads.
ALTER TABLE "products" ADD COLUMN "is_bundle" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "bundle_components" (
    "tenant_id" UUID NOT NULL,
    "bundle_id" UUID NOT NULL,
    "component_id" UUID NOT NULL,
    "quantity" BIGINT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "bundle_components_pkey" PRIMARY KEY ("tenant_id", "bundle_id", "component_id"),
    CONSTRAINT "bundle_components_quantity_check" CHECK ("quantity" > 0),
    CONSTRAINT "bundle_components_not_itself_check" CHECK ("bundle_id" <> "component_id")
);
-- The bundles a component is in (availability and low-stock events of the bundles).
CREATE INDEX "bundle_components_tenant_id_component_id_idx" ON "bundle_components"("tenant_id", "component_id");
ALTER TABLE "bundle_components" ADD CONSTRAINT "bundle_components_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
