-- ensure_event_months: creates the month partitions of lp_events from the month of :from_ms through
-- the month of :to_ms (UTC milliseconds) that do not exist yet; yields how many it created.
SELECT lp_ensure_event_months(:from_ms::bigint, :to_ms::bigint)
