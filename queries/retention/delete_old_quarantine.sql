-- delete_old_quarantine: one small batch of the quarantine's retention, the oldest first, so
-- that each transaction holds the writer only briefly (ingest commits between batches).
-- Run on the events database. Parameters: before_ms (received before it are
-- deleted), batch (at most this many rows). Idempotent: yes (run until it deletes nothing).
DELETE FROM quarantine
WHERE id IN (SELECT id FROM quarantine INDEXED BY quarantine_by_time
             WHERE received_at_ms < :before_ms ORDER BY received_at_ms LIMIT :batch)
