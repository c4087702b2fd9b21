-- upsert_dimension_block: adds one delta to a dimension block row, creating it when missing.
-- Parameters (positional): dim, level, block, value, bot, events, clicks, fallbacks,
-- installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens,
-- deferred_opens. Idempotent: no (it adds); the watermark in the same transaction guards it.
INSERT INTO dimension_blocks (dim, level, block, value, bot, events, clicks, fallbacks, installs_click_id,
    installs_ref, installs_fingerprint, installs_organic, opens, deferred_opens)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (dim, level, block, value, bot) DO UPDATE SET
    events = events + excluded.events,
    clicks = clicks + excluded.clicks,
    fallbacks = fallbacks + excluded.fallbacks,
    installs_click_id = installs_click_id + excluded.installs_click_id,
    installs_ref = installs_ref + excluded.installs_ref,
    installs_fingerprint = installs_fingerprint + excluded.installs_fingerprint,
    installs_organic = installs_organic + excluded.installs_organic,
    opens = opens + excluded.opens,
    deferred_opens = deferred_opens + excluded.deferred_opens
