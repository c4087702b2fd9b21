-- rollup_counts: the rollup rows of one grain over [from, to) that pass the filters, with a
-- grouping key, the bot flag, the counts and the click visitor sketch; the caller adds them up
-- (in Swift: faster than SQLite's GROUP BY, which sorts through a temporary B-tree). Since the
-- conversion cubes (rollups/0006) only the grains by platform are rows, so the link filters
-- are NULL in practice; they are kept so the statement answers any grain it is given. The key
-- is chosen from an allow-list by ?4: 'bucket', 'ref', 'campaign', 'source', 'medium',
-- 'platform', or anything else for one group.
-- Filters ?5..?9 (NULL: any): campaign, ref, source, medium, platform. ?10: NULL, or a JSON
-- array of keys to keep. Parameters (positional): grain, from_ms, to_ms, key, filters…, keys.
-- Idempotent: yes (read-only).
SELECT key, bot, events, clicks, fallbacks, installs_click_id, installs_ref,
       installs_fingerprint, installs_organic, opens, deferred_opens, click_visitors, installs_install_referrer,
       opens_install_referrer, opens_click_id, opens_ref, opens_fingerprint, opens_organic
FROM (
    SELECT CASE ?4 WHEN 'bucket' THEN bucket WHEN 'ref' THEN ref WHEN 'campaign' THEN campaign
                   WHEN 'source' THEN source WHEN 'medium' THEN medium WHEN 'platform' THEN platform
                   ELSE '' END AS key, *
    FROM rollups
    WHERE grain = ?1 AND bucket >= ?2 AND bucket < ?3
      AND (?5 IS NULL OR campaign = ?5) AND (?6 IS NULL OR ref = ?6) AND (?7 IS NULL OR source = ?7)
      AND (?8 IS NULL OR medium = ?8) AND (?9 IS NULL OR platform = ?9)
)
WHERE ?10 IS NULL OR key IN (SELECT value FROM json_each(?10))
