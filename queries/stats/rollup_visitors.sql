-- rollup_visitors: the click visitor sketch of every rollup row of one grain over [from, to)
-- that has one, with the row's key (chosen as in rollup_counts.sql) and bot flag; merged by
-- the caller. Parameters (positional): as rollup_counts.sql. Idempotent: yes (read-only).
SELECT key, bot, click_visitors
FROM (
    SELECT CASE ?4 WHEN 'bucket' THEN bucket WHEN 'ref' THEN ref WHEN 'campaign' THEN campaign
                   WHEN 'source' THEN source WHEN 'medium' THEN medium WHEN 'platform' THEN platform
                   ELSE '' END AS key, bot, click_visitors
    FROM rollups
    WHERE grain = ?1 AND bucket >= ?2 AND bucket < ?3 AND click_visitors IS NOT NULL
      AND (?5 IS NULL OR campaign = ?5) AND (?6 IS NULL OR ref = ?6) AND (?7 IS NULL OR source = ?7)
      AND (?8 IS NULL OR medium = ?8) AND (?9 IS NULL OR platform = ?9)
)
WHERE ?10 IS NULL OR key IN (SELECT value FROM json_each(?10))
