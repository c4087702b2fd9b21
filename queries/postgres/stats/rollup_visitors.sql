-- rollup_visitors: the click-visitor sketches of the rows rollup_counts.sql sums ($1-$7 the same),
-- of the group keys in $8 only when given: key, bot, sketch. Merged by the reader.
SELECT CASE $7::text WHEN 'value' THEN r.value WHEN 'platform' THEN r.platform::text
                     WHEN 'bucket' THEN r.bucket_ms::text ELSE '' END AS key,
       r.bot, r.visitors
FROM lp_rollups r
WHERE r.dimension = $1 AND r.grain = $2 AND r.bucket_ms >= $3 AND r.bucket_ms < $4
  AND ($5::text IS NULL OR r.value = $5) AND ($6::smallint IS NULL OR r.platform = $6)
  AND r.clicks > 0 AND ($8::text[] IS NULL OR r.value = ANY($8))
