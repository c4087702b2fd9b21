-- ensure_event_months: creates the month partitions of lp_events from the month of $1 through
-- the month of $2 (UTC milliseconds) that do not exist yet; yields how many it created.
SELECT lp_ensure_event_months($1::bigint, $2::bigint)
