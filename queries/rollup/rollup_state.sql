-- rollup_state: the rollup file's owner, watermark, attribution window, the id of the event at
-- the watermark, the first day not added to the cube blocks (above one day), and how many
-- passes wrote dimension day parts since they were last folded, and the counting rules the
-- rollups were counted by.
-- Parameters: none. Idempotent: yes (read-only).
SELECT database_id, rolled_through_seq, attribution_window_ms, through_event_id, blocks_merged_through_day, dimension_part_passes, counting_rules FROM rollup_state
