-- dimension_visitors: the click visitor sketches of some values of a dimension over the days
-- [from_day, to_day): the days' folded sketches and the parts not yet folded, several rows
-- per value, day and audience; merged (a union) by the caller.
-- Parameters: dim, from_day, to_day, values (a JSON array). Idempotent: yes (read-only).
SELECT value, bot, click_visitors
FROM dimension_days
WHERE dim = :dim AND value IN (SELECT value FROM json_each(:values)) AND day >= :from_day AND day < :to_day
UNION ALL
SELECT value, bot, click_visitors
FROM dimension_day_parts
WHERE dim = :dim AND value IN (SELECT value FROM json_each(:values)) AND day >= :from_day AND day < :to_day
