-- forget: the attributions of the batch's events, and the kept clicks no event is attributed to
-- any more (their last user is in the batch).
WITH attributions AS (
    DELETE FROM lp_attributions a USING lp_gone g WHERE a.seq = g.seq RETURNING a.matched_click_seq
)
DELETE FROM lp_kept_clicks k
WHERE k.seq IN (SELECT matched_click_seq FROM attributions)
  AND NOT EXISTS (SELECT 1 FROM lp_attributions a WHERE a.matched_click_seq = k.seq
                  AND NOT EXISTS (SELECT 1 FROM lp_gone g WHERE g.seq = a.seq))
