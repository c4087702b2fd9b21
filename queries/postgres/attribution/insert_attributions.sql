-- insert_attributions: one round's answers. $1: JSON array of {seq, match_type,
-- matched_click_seq, candidates} (absent for NULL).
INSERT INTO lp_attributions (seq, match_type, matched_click_seq, candidates)
SELECT seq, match_type, matched_click_seq, candidates
FROM json_to_recordset($1::json) AS a(seq bigint, match_type text, matched_click_seq bigint, candidates integer)
