-- audience_counts: the rows by audience (audience_rollups) of one dimension ?1 and grain ?2
-- over buckets [?3, ?4), of the value ?5 when given (NULL: any), with a grouping key chosen by
-- ?6 from an allow-list ('value', 'bucket', or anything else for one group), the bot flag, and
-- the counts with, when ?8 is 1, the click visitor sketch (NULL otherwise: the counts alone
-- never touch its overflow pages), in rollup_counts.sql's column order; the caller adds them
-- up. ?7: NULL, or a JSON array of keys to keep. Parameters (positional).
-- Idempotent: yes (read-only).
SELECT CASE ?6 WHEN 'value' THEN value WHEN 'bucket' THEN bucket ELSE '' END AS key,
       bot, events, clicks, fallbacks, installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens,
       deferred_opens, CASE WHEN ?8 = 1 THEN click_visitors END AS click_visitors, installs_install_referrer,
       opens_install_referrer, opens_click_id, opens_ref, opens_fingerprint, opens_organic
FROM audience_rollups
WHERE dimension = ?1 AND grain = ?2 AND bucket >= ?3 AND bucket < ?4 AND (?5 IS NULL OR value = ?5)
  AND (?7 IS NULL OR (CASE ?6 WHEN 'value' THEN value WHEN 'bucket' THEN bucket ELSE '' END) IN (SELECT value FROM json_each(?7)))
