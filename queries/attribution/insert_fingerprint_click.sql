-- insert_fingerprint_click: indexes a non-bot click by hour, address and platform.
-- Parameters (positional): hour, ip_key, platform, occurred_at_ms, seq, os_version, ref,
-- campaign, source, medium. Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO fingerprint_clicks (hour, ip_key, platform, occurred_at_ms, seq, os_version, ref, campaign, source, medium)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
