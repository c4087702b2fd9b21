-- delete_dimension_day_parts: ends a fold: the parts of passes through :pass, all folded into
-- dimension_days, are deleted, and the count of passes since the fold starts over.
-- Parameters: pass. Idempotent: yes.
DELETE FROM dimension_day_parts WHERE pass <= :pass;
UPDATE rollup_state SET dimension_part_passes = 0;
