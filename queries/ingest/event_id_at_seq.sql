-- event_id_at_seq: the client id of the event stored under a seq, to confirm a key match.
-- Parameters: seq. Idempotent: yes (read-only).
SELECT event_id FROM events WHERE seq = :seq
