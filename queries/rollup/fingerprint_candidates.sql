-- fingerprint_candidates: non-bot clicks of one UTC hour from one address and platform within
-- [earliest_ms, at_ms], newest first. Parameters (positional): hour, ip_key, platform,
-- earliest_ms, at_ms. Idempotent: yes (read-only).
SELECT seq, os_version, ref, campaign, source, medium FROM fingerprint_clicks
WHERE hour = ? AND ip_key = ? AND platform = ? AND occurred_at_ms >= ? AND occurred_at_ms <= ?
ORDER BY occurred_at_ms DESC, seq DESC
