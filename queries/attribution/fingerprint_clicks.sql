-- fingerprint_clicks: attribution rule 3, the non-bot clicks of one UTC hour from one address
-- and platform within [from_ms, through_ms], newest first (ties in time: the later stored
-- first), of the clicks indexed so far, with their link's dimensions. Parameters
-- (positional): hour, ip_key, platform code, from_ms, through_ms. Idempotent: yes (read-only).
SELECT c.seq, c.occurred_at_ms, c.os_version, l.ref, l.campaign, l.source, l.medium
FROM fingerprint_clicks c
LEFT JOIN ev.event_links l ON l.id = c.link
WHERE c.hour = ?1 AND c.ip_key = ?2 AND c.platform = ?3 AND c.occurred_at_ms >= ?4 AND c.occurred_at_ms <= ?5
ORDER BY c.occurred_at_ms DESC, c.seq DESC
