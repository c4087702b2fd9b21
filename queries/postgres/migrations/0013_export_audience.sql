-- Migration 0013 (PostgreSQL): the raw-event export reads each event's audience (as stored,
-- AudienceDimensions.stored), a column at the end of lp_export_rows (RawEventColumn order).
CREATE OR REPLACE VIEW lp_export_rows AS
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.sent_at_ms, e.received_at_ms,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, e.user_agent, e.os_version, e.app_version,
       e.properties, e.bot, e.bot_reason, e.visitor_id, a.match_type,
       CASE WHEN a.match_type IN ('click_id', 'install_referrer', 'fingerprint')
            THEN COALESCE((SELECT c.event_id FROM lp_events c WHERE c.seq = a.matched_click_seq),
                          (SELECT k.event_id FROM lp_kept_clicks k WHERE k.seq = a.matched_click_seq))
       END AS matched_click_id,
       e.click_id_source, e.install_referrer, e.audience
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq;
