-- count: how many links are not deleted.
-- Parameters: none. Idempotent: yes (read-only).
SELECT count(*) FROM links WHERE deleted_at_ms IS NULL
