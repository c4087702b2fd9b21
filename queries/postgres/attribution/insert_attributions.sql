-- insert_attributions: one round's answers. :rows: JSON array of {seq, match_type,
-- matched_click_seq, candidates, ref, campaign, source, medium} (absent for NULL; the link
-- dimensions are those the event is counted under).
INSERT INTO lp_attributions (seq, match_type, matched_click_seq, candidates, ref, campaign, source, medium)
SELECT seq, match_type, matched_click_seq, candidates, ref, campaign, source, medium
FROM json_to_recordset(:rows::json) AS a(
    seq bigint, match_type text, matched_click_seq bigint, candidates integer,
    ref text, campaign text, source text, medium text)
