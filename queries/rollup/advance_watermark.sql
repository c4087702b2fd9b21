-- advance_watermark: records that every event with seq <= :seq is counted, the id of that event
-- (:event_id, read with the pass's events; checked at open against the events database), and
-- the first day not yet added to the cube blocks above one day (:merged_through_day); run in
-- the same transaction as the rollup rows of those events. Parameters: seq, event_id,
-- merged_through_day.
-- Idempotent: yes.
UPDATE rollup_state SET rolled_through_seq = :seq, through_event_id = :event_id,
    blocks_merged_through_day = :merged_through_day
