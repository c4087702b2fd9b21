-- any_before: whether any raw event happened before an instant (one row, or none): retention
-- records no horizon, and so changes nothing, while there is nothing to delete.
-- Run on the events database. Parameters (positional): before_ms. Idempotent: yes (read-only).
SELECT 1 FROM event_rows INDEXED BY events_by_time WHERE occurred_at_ms < ?1 LIMIT 1
