-- click_dimensions: the link dimensions (ref, campaign, source, medium), the audience (an
-- event_texts id) and the referrer of the click stored under a seq (no row when that event is
-- not a click). Parameters: seq.
-- Idempotent: yes (read-only).
-- The click may be sealed (event_archive): both are asked; one has it.
SELECT ref, campaign, source, medium, audience, referrer FROM event_rows WHERE seq = :seq AND type = 0
UNION ALL
SELECT ref, campaign, source, medium, audience, referrer FROM event_archive WHERE seq = :seq AND type = 0
