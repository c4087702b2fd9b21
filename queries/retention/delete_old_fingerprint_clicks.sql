-- delete_old_fingerprint_clicks: one batch of the on-disk fingerprint index's clicks of UTC
-- hours before the raw horizon's, or before the index's span (attribution_state.
-- fingerprint_from_ms), oldest first. Run on the attribution file. Parameters:
-- :hour (hours since 1970 before which rows go), batch.
-- Idempotent: yes (run until it deletes nothing).
DELETE FROM fingerprint_clicks
WHERE (hour, ip_key, platform, occurred_at_ms, seq) IN (
    SELECT hour, ip_key, platform, occurred_at_ms, seq FROM fingerprint_clicks WHERE hour < :hour LIMIT :batch)
