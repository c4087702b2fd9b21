-- advance_watermark: records that every event with seq <= ?1 is counted, the id of that event
-- (checked at open against the events database), and the first day not yet added to the
-- cube blocks above one day (?2); run in the same transaction as the
-- rollup rows of those events. Parameters (positional): seq, merged_through_day.
-- Idempotent: yes.
UPDATE rollup_state SET rolled_through_seq = ?1, through_event_id = (SELECT event_id FROM events WHERE seq = ?1),
    blocks_merged_through_day = ?2
