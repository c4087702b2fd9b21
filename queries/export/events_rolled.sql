-- events_rolled: one page of the raw-event export, the events the rollup job has already seen
-- (through event_times, ordered by time then seq), with the match attribution gave them.
-- Parameters (positional): from_ms, to_ms, rolled_through_seq (the export's snapshot),
--   after_ms, after_seq (the keyset cursor; -1/-1 from the start), ref, campaign, source,
--   medium, platform (NULL = any; compared with the values as stored), include_bots (0/1), page size.
-- Idempotent: yes (read-only).
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.sent_at_ms, e.received_at_ms,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, e.user_agent, e.os_version, e.app_version, e.properties,
       e.bot, e.bot_reason, e.visitor_id, a.match_type, a.matched_click_id
FROM event_times t
JOIN events e ON e.seq = t.seq
LEFT JOIN attribution a ON a.seq = t.seq
WHERE t.occurred_at_ms >= ?1 AND t.occurred_at_ms < ?2 AND t.seq <= ?3
  AND (t.occurred_at_ms, t.seq) > (?4, ?5)
  AND (?6 IS NULL OR e.ref = ?6) AND (?7 IS NULL OR e.campaign = ?7)
  AND (?8 IS NULL OR e.source = ?8) AND (?9 IS NULL OR e.medium = ?9)
  AND (?10 IS NULL OR e.platform = ?10) AND (?11 OR e.bot = 0)
ORDER BY t.occurred_at_ms, t.seq
LIMIT ?12
