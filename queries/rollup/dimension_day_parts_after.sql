-- dimension_day_parts_after: the next slice of a fold: the parts of passes through ?5 whose
-- key (dim, value, day, bot) comes after (?1, ?2, ?3, ?4), in key order (the table's; the
-- caller stops after as many keys as a slice takes).
-- Parameters (positional): dim, value, day, bot (the last key folded), pass.
-- Idempotent: yes (read-only).
SELECT dim, value, day, bot, click_visitors
FROM dimension_day_parts
WHERE (dim, value, day, bot) > (?1, ?2, ?3, ?4) AND pass <= ?5
ORDER BY dim, value, day, bot
