-- health: a trivial read of the events database, for the health check (answers 1).
-- Parameters: none. Idempotent: yes (read-only).
SELECT 1
