-- recent_clicks: the non-bot clicks the follower holds in memory (RecentClicks), listed
-- again after a start: those attributed so far that happened at or after the memory horizon,
-- in (time, seq) order (the events' time index). Parameters (positional): horizon_ms,
-- through_seq. Idempotent: yes (read-only).
SELECT seq, occurred_at_ms, ref, ip_hash, platform, os_version FROM ev.events
WHERE occurred_at_ms >= ? AND seq <= ? AND type = 'click' AND bot = 0
ORDER BY occurred_at_ms, seq
