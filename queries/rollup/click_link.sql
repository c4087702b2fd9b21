-- click_link: the link id of the click stored under a seq (no row when that event is not a
-- click; NULL when the click has no link). Parameters (positional): seq.
-- Idempotent: yes (read-only).
SELECT link FROM event_rows WHERE seq = ? AND type = 0
