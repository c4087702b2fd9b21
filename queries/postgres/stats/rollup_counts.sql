-- rollup_counts: the summed counts of the rollup rows of one dimension (:dimension) and grain (:grain) in
-- [:from_ms, :to_ms), of the value :value and platform :platform when given, grouped by :key: 'value', 'platform',
-- 'bucket' (the row's bucket start) or 'all'; people and bots apart. Columns: the group key as
-- text, bot, then the fifteen counts in ConversionCounts.row order (sums of bigint are
-- numeric: cast).
SELECT CASE :key::text WHEN 'value' THEN r.value WHEN 'platform' THEN r.platform::text
                     WHEN 'bucket' THEN r.bucket_ms::text ELSE '' END AS key,
       r.bot, sum(r.events)::bigint AS events, sum(r.clicks)::bigint AS clicks, sum(r.fallbacks)::bigint AS fallbacks,
       sum(r.installs_click_id)::bigint AS installs_click_id, sum(r.installs_ref)::bigint AS installs_ref,
       sum(r.installs_fingerprint)::bigint AS installs_fingerprint, sum(r.installs_organic)::bigint AS installs_organic,
       sum(r.opens)::bigint AS opens, sum(r.deferred_opens)::bigint AS deferred_opens,
       sum(r.installs_install_referrer)::bigint AS installs_install_referrer,
       sum(r.opens_install_referrer)::bigint AS opens_install_referrer, sum(r.opens_click_id)::bigint AS opens_click_id,
       sum(r.opens_ref)::bigint AS opens_ref, sum(r.opens_fingerprint)::bigint AS opens_fingerprint,
       sum(r.opens_organic)::bigint AS opens_organic
FROM lp_rollups r
WHERE r.dimension = :dimension AND r.grain = :grain AND r.bucket_ms >= :from_ms AND r.bucket_ms < :to_ms
  AND (:value::text IS NULL OR r.value = :value) AND (:platform::smallint IS NULL OR r.platform = :platform)
GROUP BY 1, 2
