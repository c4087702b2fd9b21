-- Migration 0004 of the rollup file: the id of the event at the watermark, so that an events
-- database restored from another copy (whose seqs may name other events) is recognised at
-- open and its rollups recomputed instead of counted twice. NULL in files of earlier versions
-- until their next pass.
ALTER TABLE rollup_state ADD COLUMN through_event_id TEXT;
