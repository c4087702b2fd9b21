-- advance: records that every event with seq <= ?1 is attributed, with the id of that event;
-- run in the same transaction as the rows of those events. Parameters (positional): seq.
-- Idempotent: yes.
UPDATE attribution_state SET attributed_through_seq = ?1, through_event_id = (SELECT event_id FROM events WHERE seq = ?1)
