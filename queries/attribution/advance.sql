-- advance: records that every event with seq <= :seq is attributed, with the id of that event;
-- run in the same transaction as the rows of those events. Parameters: seq.
-- Idempotent: yes.
UPDATE attribution_state SET attributed_through_seq = :seq, through_event_id = (SELECT event_id FROM events WHERE seq = :seq)
