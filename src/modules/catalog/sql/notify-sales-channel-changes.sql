-- Every process keeps the warehouses its sales channels sell from in memory. A change of a
-- channel's warehouses or allocation strategy, by any code or through a deleted warehouse,
-- channel or tenant, is announced on channel `sales_channel_changed` as `<tenant id>:<channel id>`.
CREATE OR REPLACE FUNCTION "notify_sales_channel_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'sales_channels' THEN
        PERFORM pg_notify('sales_channel_changed', OLD.tenant_id::text || ':' || OLD.id::text);
    ELSIF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('sales_channel_changed', OLD.tenant_id::text || ':' || OLD.channel_id::text);
    ELSE
        PERFORM pg_notify('sales_channel_changed', NEW.tenant_id::text || ':' || NEW.channel_id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "channel_warehouses_notify_changed"
    AFTER INSERT OR UPDATE OR DELETE ON channel_warehouses
    FOR EACH ROW EXECUTE FUNCTION notify_sales_channel_changed();

CREATE OR REPLACE TRIGGER "sales_channels_notify_changed"
    AFTER UPDATE OF allocation_strategy OR DELETE ON sales_channels
    FOR EACH ROW EXECUTE FUNCTION notify_sales_channel_changed();
