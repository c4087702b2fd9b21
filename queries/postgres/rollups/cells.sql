-- cells: the stored rows of the cells a round adds to (keys given as six parallel arrays:
-- dimension, grain, bucket_ms, value, platform, bot), to be merged with the round's counts.
SELECT r.dimension, r.grain, r.bucket_ms, r.value, r.platform, r.bot,
       r.events, r.clicks, r.fallbacks, r.installs_click_id, r.installs_ref, r.installs_fingerprint,
       r.installs_organic, r.opens, r.deferred_opens, r.installs_install_referrer,
       r.opens_install_referrer, r.opens_click_id, r.opens_ref, r.opens_fingerprint, r.opens_organic, r.visitors
FROM unnest(:dimensions::smallint[], :grains::smallint[], :buckets::bigint[], :values::text[], :platforms::smallint[], :bots::boolean[])
     AS k(dimension, grain, bucket_ms, value, platform, bot)
JOIN lp_rollups r USING (dimension, grain, bucket_ms, value, platform, bot)
