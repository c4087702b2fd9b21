-- upsert_rollup: adds one delta to a rollup row, creating it when missing; sketches are
-- merged with lp_sketch_union. Parameters: the row's key, its
-- counts in the order of CountedEvent's lanes (bound as a run, `UpsertRollupParameter`), then
-- the click visitors.
-- Idempotent: no (it adds); the watermark advanced in the same transaction prevents reruns.
INSERT INTO rollups (
    grain, bucket, platform, bot, ref, campaign, source, medium, events, clicks, fallbacks,
    installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens, deferred_opens,
    installs_install_referrer, opens_install_referrer, opens_click_id, opens_ref, opens_fingerprint,
    opens_organic, click_visitors
) VALUES (
    :grain, :bucket, :platform, :bot, :ref, :campaign, :source, :medium, :events, :clicks,
    :fallbacks, :installs_click_id, :installs_ref, :installs_fingerprint, :installs_organic, :opens,
    :deferred_opens, :installs_install_referrer, :opens_install_referrer, :opens_click_id,
    :opens_ref, :opens_fingerprint, :opens_organic, :click_visitors
)
ON CONFLICT (grain, bucket, platform, bot, ref, campaign, source, medium) DO UPDATE SET
    events = events + excluded.events,
    clicks = clicks + excluded.clicks,
    fallbacks = fallbacks + excluded.fallbacks,
    installs_click_id = installs_click_id + excluded.installs_click_id,
    installs_ref = installs_ref + excluded.installs_ref,
    installs_fingerprint = installs_fingerprint + excluded.installs_fingerprint,
    installs_organic = installs_organic + excluded.installs_organic,
    opens = opens + excluded.opens,
    deferred_opens = deferred_opens + excluded.deferred_opens,
    installs_install_referrer = installs_install_referrer + excluded.installs_install_referrer,
    opens_install_referrer = opens_install_referrer + excluded.opens_install_referrer,
    opens_click_id = opens_click_id + excluded.opens_click_id,
    opens_ref = opens_ref + excluded.opens_ref,
    opens_fingerprint = opens_fingerprint + excluded.opens_fingerprint,
    opens_organic = opens_organic + excluded.opens_organic,
    click_visitors = lp_sketch_union(click_visitors, excluded.click_visitors)
