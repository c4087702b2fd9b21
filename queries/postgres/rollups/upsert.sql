-- upsert: writes a round's cells, each with its whole new value (the stored row merged with
-- the round's counts beforehand: see cells.sql). Twenty-two parallel arrays, in column order.
INSERT INTO lp_rollups (dimension, grain, bucket_ms, value, platform, bot, events, clicks, fallbacks,
                        installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens,
                        deferred_opens, installs_install_referrer, opens_install_referrer, opens_click_id, opens_ref,
                        opens_fingerprint, opens_organic, visitors)
SELECT * FROM unnest($1::smallint[], $2::smallint[], $3::bigint[], $4::text[], $5::smallint[], $6::boolean[],
                     $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[],
                     $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[],
                     $19::bigint[], $20::bigint[], $21::bigint[], $22::bytea[])
ON CONFLICT (dimension, grain, bucket_ms, value, platform, bot) DO UPDATE SET
    events = excluded.events, clicks = excluded.clicks, fallbacks = excluded.fallbacks,
    installs_click_id = excluded.installs_click_id, installs_ref = excluded.installs_ref,
    installs_fingerprint = excluded.installs_fingerprint, installs_organic = excluded.installs_organic,
    opens = excluded.opens, deferred_opens = excluded.deferred_opens,
    installs_install_referrer = excluded.installs_install_referrer,
    opens_install_referrer = excluded.opens_install_referrer, opens_click_id = excluded.opens_click_id,
    opens_ref = excluded.opens_ref, opens_fingerprint = excluded.opens_fingerprint,
    opens_organic = excluded.opens_organic, visitors = excluded.visitors
