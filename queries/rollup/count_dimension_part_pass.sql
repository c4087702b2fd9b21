-- count_dimension_part_pass: one more pass wrote dimension day parts; run in the pass's
-- transaction. Parameters: none. Idempotent: no (counts).
UPDATE rollup_state SET dimension_part_passes = dimension_part_passes + 1
