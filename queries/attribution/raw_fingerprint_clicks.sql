-- raw_fingerprint_clicks: attribution rule 3 before the on-disk fingerprint index's span: the
-- non-bot clicks of one platform within [from_ms, through_ms] stored before an event, read
-- from the raw events (the caller keeps those whose keyed IP hash has the fingerprint's first
-- 8 bytes), newest first (ties in time: the later stored first), with the OS version's text.
-- Parameters (positional): from_ms, through_ms, platform code, before_seq.
-- Idempotent: yes (read-only).
-- Sealed clicks (event_archive) are read beside event_rows (a row is in one of them).
SELECT r.seq, r.occurred_at_ms, r.ip_hash, (SELECT value FROM ev.event_texts WHERE id = r.os_version)
FROM ev.event_rows r
WHERE r.occurred_at_ms >= ?1 AND r.occurred_at_ms <= ?2 AND r.type = 0 AND r.bot = 0 AND r.platform = ?3 AND r.seq < ?4
UNION ALL
SELECT r.seq, r.occurred_at_ms, r.ip_hash, (SELECT value FROM ev.event_texts WHERE id = r.os_version)
FROM event_archive r
WHERE r.occurred_at_ms >= ?1 AND r.occurred_at_ms <= ?2 AND r.type = 0 AND r.bot = 0 AND r.platform = ?3 AND r.seq < ?4
ORDER BY 2 DESC, 1 DESC
