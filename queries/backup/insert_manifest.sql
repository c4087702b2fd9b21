-- insert_manifest: one fact of a backup (format, created_at_ms, secrets, events, max_seq).
-- Run on the backup copy. Parameters: name, value. Idempotent: no.
INSERT INTO linkpulse_backup (name, value) VALUES (:name, :value)
