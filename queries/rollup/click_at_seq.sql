-- click_at_seq: the id and link dimensions of a stored click, to confirm a click_id match.
-- Parameters (positional): seq. Idempotent: yes (read-only). No row when it is not a click.
SELECT event_id, ref, campaign, source, medium FROM events WHERE seq = ? AND type = 'click'
