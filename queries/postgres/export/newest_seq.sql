-- newest_seq: the seq of the newest stored event (0 when none): where a raw-event export's
-- snapshot ends.
SELECT COALESCE(max(seq), 0) FROM lp_events
