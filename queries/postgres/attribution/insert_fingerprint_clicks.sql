-- insert_fingerprint_clicks: one round's non-bot clicks with an address. :rows: JSON array of
-- {ip_key, platform, occurred_at_ms, seq, os_version, ref, campaign, source, medium}.
INSERT INTO lp_fingerprint_clicks (ip_key, platform, occurred_at_ms, seq, os_version, ref, campaign, source, medium)
SELECT ip_key, platform, occurred_at_ms, seq, os_version, ref, campaign, source, medium
FROM json_to_recordset(:rows::json) AS c(
    ip_key bigint, platform smallint, occurred_at_ms bigint, seq bigint, os_version text,
    ref text, campaign text, source text, medium text)
