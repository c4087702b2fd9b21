-- newest_ref_click: attribution rule 2, the newest non-bot click of a ref at or before an
-- instant (ties in time: the later stored), of the clicks indexed so far (those stored before
-- the event being attributed). Parameters (positional): ref, at_ms. Idempotent: yes (read-only).
SELECT seq, occurred_at_ms, campaign, source, medium FROM ref_clicks
WHERE ref = ? AND occurred_at_ms <= ?
ORDER BY occurred_at_ms DESC, seq DESC LIMIT 1
