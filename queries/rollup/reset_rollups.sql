-- reset_rollups: forgets every rollup, so the next passes recompute them from the raw events
-- and their stored attribution. The link tuples stay: their ids never change.
-- Parameters: :database_id, :window_ms, :counting_rules (CountingRules.version).
-- Idempotent: yes.
DELETE FROM rollups;
DELETE FROM cube_parts;
DELETE FROM cube_blocks;
DELETE FROM dimension_days;
DELETE FROM dimension_day_parts;
DELETE FROM audience_rollups;
INSERT OR REPLACE INTO rollup_state (singleton, database_id, rolled_through_seq, attribution_window_ms, counting_rules)
VALUES (1, :database_id, 0, :window_ms, :counting_rules);
