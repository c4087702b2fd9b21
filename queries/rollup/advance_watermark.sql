-- advance_watermark: records that every event with seq <= ?1 is counted, and the id of that
-- event (checked at open against the events database); run in the same transaction as the
-- rollup rows of those events. Parameters (positional): seq. Idempotent: yes.
UPDATE rollup_state SET rolled_through_seq = ?1, through_event_id = (SELECT event_id FROM events WHERE seq = ?1)
