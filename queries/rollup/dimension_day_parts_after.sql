-- dimension_day_parts_after: the next slice of a fold: the parts of passes through :pass whose
-- key (dim, value, day, bot) comes after (:dim, :value, :day, :bot), in key order (the table's; the
-- caller stops after as many keys as a slice takes).
-- Parameters: dim, value, day, bot (the last key folded), pass.
-- Idempotent: yes (read-only).
SELECT dim, value, day, bot, click_visitors
FROM dimension_day_parts
WHERE (dim, value, day, bot) > (:dim, :value, :day, :bot) AND pass <= :pass
ORDER BY dim, value, day, bot
