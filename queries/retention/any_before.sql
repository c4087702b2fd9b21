-- any_before: whether any raw event happened before an instant (one row, or none): retention
-- records no horizon, and so changes nothing, while there is nothing to delete.
-- Run on the events database. Parameters: before_ms. Idempotent: yes (read-only).
-- Sealed events (event_archive) included.
SELECT 1 FROM event_rows INDEXED BY events_by_time WHERE occurred_at_ms < :before_ms
UNION ALL
SELECT 1 FROM event_archive WHERE occurred_at_ms < :before_ms
LIMIT 1
