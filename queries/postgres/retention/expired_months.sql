-- expired_months: the month partitions of lp_events that end at or before :horizon_ms (the horizon, UTC
-- ms), oldest first: name, start, end.
SELECT c.relname AS month, lo.v AS lower_bound, hi.v AS upper_bound
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
JOIN pg_class p ON p.oid = i.inhparent AND p.relname = 'lp_events'
CROSS JOIN LATERAL (SELECT substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''?(-?[0-9]+)''?\)')::bigint AS v) lo
CROSS JOIN LATERAL (SELECT substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''?(-?[0-9]+)''?\)')::bigint AS v) hi
WHERE c.relname <> 'lp_events_default' AND hi.v <= :horizon_ms
ORDER BY lo.v
