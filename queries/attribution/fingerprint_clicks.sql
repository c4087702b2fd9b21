-- fingerprint_clicks: attribution rule 3, the non-bot clicks of one UTC hour from one address
-- and platform within [from_ms, through_ms], of those stored before an event, newest first
-- (ties in time: the later stored first). Read through events_fingerprint_clicks, whose
-- expressions are repeated here word for word. Parameters (positional): hour, ip_key_hex
-- (the first 16 hex digits of the keyed IP hash), platform, from_ms, through_ms, before_seq.
-- Idempotent: yes (read-only).
SELECT seq, occurred_at_ms, ref, campaign, source, medium, os_version
FROM events INDEXED BY events_fingerprint_clicks
WHERE type = 'click' AND bot = 0 AND ip_hash IS NOT NULL
  AND occurred_at_ms / 3600000 = ?1 AND substr(ip_hash, 1, 16) = ?2 AND platform = ?3
  AND occurred_at_ms >= ?4 AND occurred_at_ms <= ?5 AND seq < ?6
ORDER BY occurred_at_ms DESC, seq DESC
