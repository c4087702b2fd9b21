-- insert_dimension_day_part: a pass's click visitors of a dimension value's day, in a part of
-- their own (folded into dimension_days later, see fold_dimension_day_parts.sql).
-- Parameters: dim, value, day, bot, pass (the seq it counted through), click_visitors.
-- Idempotent: yes (a sketch union; the same pass written twice changes nothing).
INSERT INTO dimension_day_parts (dim, value, day, bot, pass, click_visitors) VALUES (:dim, :value, :day, :bot, :pass, :click_visitors)
ON CONFLICT (dim, value, day, bot, pass) DO UPDATE SET
    click_visitors = lp_sketch_union(click_visitors, excluded.click_visitors)
