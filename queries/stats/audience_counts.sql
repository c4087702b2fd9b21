-- audience_counts: the rows by audience (audience_rollups) of one dimension :dimension and grain :grain
-- over buckets [:from_ms, :to_ms), of the value :value when given (NULL: any), with a grouping key chosen by
-- :key from an allow-list ('value', 'bucket', or anything else for one group), the bot flag, and
-- the counts with, when :visitors is 1, the click visitor sketch (NULL otherwise: the counts alone
-- never touch its overflow pages), in rollup_counts.sql's column order; the caller adds them
-- up. :keys: NULL, or a JSON array of keys to keep.
-- Idempotent: yes (read-only).
SELECT CASE :key WHEN 'value' THEN value WHEN 'bucket' THEN bucket ELSE '' END AS key,
       bot, events, clicks, fallbacks, installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens,
       deferred_opens, CASE WHEN :visitors = 1 THEN click_visitors END AS click_visitors, installs_install_referrer,
       opens_install_referrer, opens_click_id, opens_ref, opens_fingerprint, opens_organic
FROM audience_rollups
WHERE dimension = :dimension AND grain = :grain AND bucket >= :from_ms AND bucket < :to_ms AND (:value IS NULL OR value = :value)
  AND (:keys IS NULL OR (CASE :key WHEN 'value' THEN value WHEN 'bucket' THEN bucket ELSE '' END) IN (SELECT value FROM json_each(:keys)))
