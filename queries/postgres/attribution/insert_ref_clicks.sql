-- insert_ref_clicks: one round's non-bot clicks with a ref. :rows: JSON array of {ref,
-- occurred_at_ms, seq, campaign, source, medium}.
INSERT INTO lp_ref_clicks (ref, occurred_at_ms, seq, campaign, source, medium)
SELECT ref, occurred_at_ms, seq, campaign, source, medium
FROM json_to_recordset(:rows::json) AS c(ref text, occurred_at_ms bigint, seq bigint, campaign text, source text, medium text)
