-- delete_sealed_row: removes one event from event_rows once its block is stored (same
-- transaction). Parameter: seq. Idempotent: yes.
DELETE FROM event_rows WHERE seq = ?1
