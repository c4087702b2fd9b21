-- rollup_visitors: the click-visitor sketches of the rows rollup_counts.sql sums (:dimension-:key the same),
-- of the group keys in :keys only when given: key, bot, sketch. Merged by the reader.
SELECT CASE :key::text WHEN 'value' THEN r.value WHEN 'platform' THEN r.platform::text
                     WHEN 'bucket' THEN r.bucket_ms::text ELSE '' END AS key,
       r.bot, r.visitors
FROM lp_rollups r
WHERE r.dimension = :dimension AND r.grain = :grain AND r.bucket_ms >= :from_ms AND r.bucket_ms < :to_ms
  AND (:value::text IS NULL OR r.value = :value) AND (:platform::smallint IS NULL OR r.platform = :platform)
  AND r.clicks > 0 AND (:keys::text[] IS NULL OR r.value = ANY(:keys))
