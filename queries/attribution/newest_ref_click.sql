-- newest_ref_click: attribution rule 2 on disk, the newest non-bot click of a ref at or before
-- an instant (ties in time: the later stored) among the clicks before the memory horizon.
-- Parameters: ref, at_ms. Idempotent: yes (read-only).
SELECT seq, occurred_at_ms FROM ref_clicks
WHERE ref = :ref AND occurred_at_ms <= :at_ms
ORDER BY occurred_at_ms DESC, seq DESC LIMIT 1
