-- advance: records that every event with seq <= :seq is attributed, with the id of that event
-- (as the events view gives it, read with the round's page of events); run in the same
-- transaction as the rows of those events. Parameters: seq, event_id. Idempotent: yes.
UPDATE attribution_state SET attributed_through_seq = :seq, through_event_id = :event_id
