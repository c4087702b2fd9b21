-- fingerprint_clicks: every attributed-through non-bot click with the fingerprint (ip_key :ip_keys[i],
-- platform :platforms[i]) that happened in [:from_ms[i], :through_ms[i]], for each i: ip_key, platform, time, seq,
-- os_version, ref, campaign, source, medium (a click may come once per window that holds it).
SELECT f.ip_key, f.platform, f.occurred_at_ms, f.seq, f.os_version, f.ref, f.campaign, f.source, f.medium
FROM unnest(:ip_keys::bigint[], :platforms::smallint[], :from_ms::bigint[], :through_ms::bigint[]) AS q(ip_key, platform, from_ms, through_ms)
JOIN lp_fingerprint_clicks f
  ON f.ip_key = q.ip_key AND f.platform = q.platform AND f.occurred_at_ms BETWEEN q.from_ms AND q.through_ms
