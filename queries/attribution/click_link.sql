-- click_link: the link of a matched click, by seq. Parameters (positional): seq.
-- Idempotent: yes (read-only).
SELECT ref, campaign, source, medium FROM ev.event_rows WHERE seq = ?
