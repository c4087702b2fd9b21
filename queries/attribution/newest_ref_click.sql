-- newest_ref_click: attribution rule 2, the newest non-bot click of a ref at or before an
-- instant, of those stored before an event (ties in time: the later stored). Read through
-- events_ref_clicks. Parameters (positional): ref, at_ms, before_seq.
-- Idempotent: yes (read-only).
SELECT seq, occurred_at_ms, campaign, source, medium, os_version
FROM events INDEXED BY events_ref_clicks
WHERE type = 'click' AND bot = 0 AND ref IS NOT NULL
  AND ref = ?1 AND occurred_at_ms <= ?2 AND seq < ?3
ORDER BY occurred_at_ms DESC, seq DESC
LIMIT 1
