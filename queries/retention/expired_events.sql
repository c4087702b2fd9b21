-- expired_events: the next raw events retention may delete, oldest first: happened before the
-- horizon, below the derived files' watermarks, after the keyset cursor (occurred_at_ms, seq).
-- Columns: seq, occurred_at_ms, type code (0 click), ref.
-- Run on the events database. Parameters: after_ms, after_seq, horizon_ms,
-- below_seq, limit. Idempotent: yes (read-only).
-- Sealed events (event_archive, read in time order) beside event_rows.
SELECT seq, occurred_at_ms, type, ref FROM event_rows INDEXED BY events_by_time
WHERE occurred_at_ms >= :after_ms AND (occurred_at_ms > :after_ms OR seq > :after_seq)
  AND occurred_at_ms < :horizon_ms AND seq < :below_seq
UNION ALL
SELECT seq, occurred_at_ms, type, ref FROM event_archive
WHERE occurred_at_ms >= :after_ms AND (occurred_at_ms > :after_ms OR seq > :after_seq)
  AND occurred_at_ms < :horizon_ms AND seq < :below_seq
ORDER BY 2, 1 LIMIT :limit
