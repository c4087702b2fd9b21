-- insert_fingerprint_click: puts a non-bot click before the memory horizon on disk by hour,
-- address and platform. Parameters: hour, ip_key, platform code, occurred_at_ms,
-- seq, os_version. Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO fingerprint_clicks (hour, ip_key, platform, occurred_at_ms, seq, os_version) VALUES (:hour, :ip_key, :platform, :occurred_at_ms, :seq, :os_version)
