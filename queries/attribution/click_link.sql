-- click_link: the link of a matched click, by seq. Parameters: seq.
-- Idempotent: yes (read-only).
-- The click may be sealed (event_archive): both are asked; one has it.
SELECT ref, campaign, source, medium FROM ev.event_rows WHERE seq = :seq
UNION ALL
SELECT ref, campaign, source, medium FROM event_archive WHERE seq = :seq
