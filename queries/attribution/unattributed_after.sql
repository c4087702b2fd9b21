-- unattributed_after: the events after a seq that attribution has not seen yet (stored before
-- migration 0003), clicks included since later events may match them, in seq order. Read by
-- the one-time backfill. Parameters (positional): after_seq, limit. Idempotent: yes (read-only).
SELECT seq, event_id, type, occurred_at_ms, ref, campaign, source, medium, platform, click_id,
       ip_hash, os_version, bot, match_type
FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2
