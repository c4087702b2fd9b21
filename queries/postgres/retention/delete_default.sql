-- delete_default: the batch's rows of lp_events_default.
DELETE FROM lp_events_default e USING lp_gone g WHERE e.seq = g.seq
