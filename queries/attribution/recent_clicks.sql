-- recent_clicks: the non-bot clicks the follower holds in memory (RecentClicks), listed
-- again after a start: those attributed so far that happened at or after the memory horizon,
-- in (time, seq) order (the events' time index), in their stored form like events_after.
-- Run on an events reader (EventStore.forEachRecentClick).
-- Parameters: horizon_ms, through_seq. Idempotent: yes (read-only).
-- Sealed clicks (event_archive) are read beside event_rows (a row is in one of them).
SELECT r.seq, r.occurred_at_ms, r.ref, r.ip_hash, r.platform, (SELECT value FROM event_texts WHERE id = r.os_version) AS os_version
FROM event_rows r
WHERE r.occurred_at_ms >= :horizon_ms AND r.seq <= :through_seq AND r.type = 0 AND r.bot = 0
UNION ALL
SELECT r.seq, r.occurred_at_ms, r.ref, r.ip_hash, r.platform, (SELECT value FROM event_texts WHERE id = r.os_version)
FROM event_archive r
WHERE r.occurred_at_ms >= :horizon_ms AND r.seq <= :through_seq AND r.type = 0 AND r.bot = 0
ORDER BY 2, 1
