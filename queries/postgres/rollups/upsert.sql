-- upsert: writes a round's cells, each with its whole new value (the stored row merged with
-- the round's counts beforehand: see cells.sql). Twenty-two parallel arrays, in column order.
INSERT INTO lp_rollups (dimension, grain, bucket_ms, value, platform, bot, events, clicks, fallbacks,
                        installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens,
                        deferred_opens, installs_install_referrer, opens_install_referrer, opens_click_id, opens_ref,
                        opens_fingerprint, opens_organic, visitors)
SELECT * FROM unnest(:dimensions::smallint[], :grains::smallint[], :buckets::bigint[], :values::text[], :platforms::smallint[], :bots::boolean[],
                     :events::bigint[], :clicks::bigint[], :fallbacks::bigint[], :installs_click_id::bigint[], :installs_ref::bigint[], :installs_fingerprint::bigint[],
                     :installs_organic::bigint[], :opens::bigint[], :deferred_opens::bigint[], :installs_install_referrer::bigint[], :opens_install_referrer::bigint[], :opens_click_id::bigint[],
                     :opens_ref::bigint[], :opens_fingerprint::bigint[], :opens_organic::bigint[], :visitors::bytea[])
ON CONFLICT (dimension, grain, bucket_ms, value, platform, bot) DO UPDATE SET
    events = excluded.events, clicks = excluded.clicks, fallbacks = excluded.fallbacks,
    installs_click_id = excluded.installs_click_id, installs_ref = excluded.installs_ref,
    installs_fingerprint = excluded.installs_fingerprint, installs_organic = excluded.installs_organic,
    opens = excluded.opens, deferred_opens = excluded.deferred_opens,
    installs_install_referrer = excluded.installs_install_referrer,
    opens_install_referrer = excluded.opens_install_referrer, opens_click_id = excluded.opens_click_id,
    opens_ref = excluded.opens_ref, opens_fingerprint = excluded.opens_fingerprint,
    opens_organic = excluded.opens_organic, visitors = excluded.visitors
