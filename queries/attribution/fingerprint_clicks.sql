-- fingerprint_clicks: attribution rule 3, the non-bot clicks on disk (those before the memory
-- horizon) of one UTC hour from one address and platform within [from_ms, through_ms], newest
-- first (ties in time: the later stored first). Parameters: hour, ip_key,
-- platform code, from_ms, through_ms. Idempotent: yes (read-only).
SELECT seq, occurred_at_ms, os_version FROM fingerprint_clicks
WHERE hour = :hour AND ip_key = :ip_key AND platform = :platform AND occurred_at_ms >= :from_ms AND occurred_at_ms <= :through_ms
ORDER BY occurred_at_ms DESC, seq DESC
