-- advance_watermark: records that every event with seq <= ? is counted; run in the same
-- transaction as the rollup rows of those events. Parameters (positional): seq.
-- Idempotent: yes.
UPDATE rollup_state SET rolled_through_seq = ?
