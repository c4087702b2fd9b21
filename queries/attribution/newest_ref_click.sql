-- newest_ref_click: attribution rule 2, the newest non-bot click of a ref at or before an
-- instant (ties in time: the later stored), of the clicks indexed so far (those stored before
-- the event being attributed), with its link's campaign, source and medium.
-- Parameters (positional): ref, at_ms. Idempotent: yes (read-only).
SELECT c.seq, c.occurred_at_ms, l.campaign, l.source, l.medium
FROM ref_clicks c
LEFT JOIN ev.event_links l ON l.id = c.link
WHERE c.ref = ?1 AND c.occurred_at_ms <= ?2
ORDER BY c.occurred_at_ms DESC, c.seq DESC LIMIT 1
