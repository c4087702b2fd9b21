-- latest_ref_click: the newest non-bot click of a ref at or before a time (ties: the later
-- stored). Parameters (positional): ref, at_ms. Idempotent: yes (read-only).
SELECT seq, campaign, source, medium FROM ref_clicks
WHERE ref = ? AND occurred_at_ms <= ?
ORDER BY occurred_at_ms DESC, seq DESC LIMIT 1
