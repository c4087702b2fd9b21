-- upsert_dimension_day: merges click visitors into a dimension value's day.
-- Parameters: dim, value, day, bot, click_visitors.
-- Idempotent: yes (a sketch union; adding the same visitors twice changes nothing).
INSERT INTO dimension_days (dim, value, day, bot, click_visitors) VALUES (:dim, :value, :day, :bot, :click_visitors)
ON CONFLICT (dim, value, day, bot) DO UPDATE SET
    click_visitors = lp_sketch_union(click_visitors, excluded.click_visitors)
