-- rollup_counts: the rollup rows of one grain over [from, to) that pass the filters, with a
-- grouping key, the bot flag, the counts and the click visitor sketch; the caller adds them up
-- (in Swift: faster than SQLite's GROUP BY, which sorts through a temporary B-tree). Since the
-- conversion cubes (rollups/0006) only the grains by platform are rows, so the link filters
-- are NULL in practice; they are kept so the statement answers any grain it is given. The key
-- is chosen from an allow-list by :key: 'bucket', 'ref', 'campaign', 'source', 'medium',
-- 'platform', or anything else for one group.
-- Filters :campaign, :ref, :source, :medium, :platform (NULL: any). :keys: NULL, or a JSON
-- array of keys to keep. Parameters: :grain, :from_ms, :to_ms, :key, the filters, :keys.
-- Idempotent: yes (read-only).
SELECT key, bot, events, clicks, fallbacks, installs_click_id, installs_ref,
       installs_fingerprint, installs_organic, opens, deferred_opens, click_visitors, installs_install_referrer,
       opens_install_referrer, opens_click_id, opens_ref, opens_fingerprint, opens_organic
FROM (
    SELECT CASE :key WHEN 'bucket' THEN bucket WHEN 'ref' THEN ref WHEN 'campaign' THEN campaign
                   WHEN 'source' THEN source WHEN 'medium' THEN medium WHEN 'platform' THEN platform
                   ELSE '' END AS key, *
    FROM rollups
    WHERE grain = :grain AND bucket >= :from_ms AND bucket < :to_ms
      AND (:campaign IS NULL OR campaign = :campaign) AND (:ref IS NULL OR ref = :ref) AND (:source IS NULL OR source = :source)
      AND (:medium IS NULL OR medium = :medium) AND (:platform IS NULL OR platform = :platform)
)
WHERE :keys IS NULL OR key IN (SELECT value FROM json_each(:keys))
