-- rollup_day_counts_by_campaign: rollup_counts for day rows (grain 2) when a campaign filter is
-- set: the same parameters, columns and meaning (?1 is not used: the grain is 2), but written so
-- that SQLite reads the rows through the partial index rollup_days_by_campaign (named: left to
-- itself, the planner prefers the primary key's bucket range, reading every value's rows).
-- Idempotent: yes (read-only).
SELECT key, bot, events, clicks, fallbacks, installs_click_id, installs_ref,
       installs_fingerprint, installs_organic, opens, deferred_opens, click_visitors
FROM (
    SELECT CASE ?4 WHEN 'bucket' THEN bucket WHEN 'ref' THEN ref WHEN 'campaign' THEN campaign
                   WHEN 'source' THEN source WHEN 'medium' THEN medium WHEN 'platform' THEN platform
                   ELSE '' END AS key, *
    FROM rollups INDEXED BY rollup_days_by_campaign
    WHERE grain = 2 AND campaign = ?5 AND bucket >= ?2 AND bucket < ?3
      AND (?5 IS NULL OR campaign = ?5) AND (?6 IS NULL OR ref = ?6) AND (?7 IS NULL OR source = ?7)
      AND (?8 IS NULL OR medium = ?8) AND (?9 IS NULL OR platform = ?9)
)
WHERE ?10 IS NULL OR key IN (SELECT value FROM json_each(?10))
