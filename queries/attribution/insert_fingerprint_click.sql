-- insert_fingerprint_click: indexes a non-bot click by hour, address and platform.
-- Parameters (positional): hour, ip_key, platform code, occurred_at_ms, seq, os_version, link
-- (its ev.event_links id, or NULL). Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO fingerprint_clicks (hour, ip_key, platform, occurred_at_ms, seq, os_version, link)
VALUES (?, ?, ?, ?, ?, ?, ?)
