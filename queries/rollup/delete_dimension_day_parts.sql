-- delete_dimension_day_parts: ends a fold: the parts of passes through ?1, all folded into
-- dimension_days, are deleted, and the count of passes since the fold starts over.
-- Parameters (positional): pass. Idempotent: yes.
DELETE FROM dimension_day_parts WHERE pass <= ?1;
UPDATE rollup_state SET dimension_part_passes = 0;
