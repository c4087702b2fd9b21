-- recent_clicks: the non-bot clicks the follower holds in memory (RecentClicks), listed
-- again after a start: those attributed so far that happened at or after the memory horizon,
-- in (time, seq) order (the events' time index), in their stored form like events_after.
-- Parameters (positional): horizon_ms, through_seq. Idempotent: yes (read-only).
SELECT r.seq, r.occurred_at_ms, r.ref, r.ip_hash, r.platform, t.value
FROM ev.event_rows r LEFT JOIN ev.event_texts t ON t.id = r.os_version
WHERE r.occurred_at_ms >= ? AND r.seq <= ? AND r.type = 0 AND r.bot = 0
ORDER BY r.occurred_at_ms, r.seq
