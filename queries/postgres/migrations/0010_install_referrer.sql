-- Migration 0010 (PostgreSQL): the Play Install Referrer as the app sent it (install_referrer),
-- kept with the event beside what was read out of it, as in SQLite; and the raw-event export
-- names it and where the app read each event's click id (click_id_source, ClickIdSource's
-- code as stored, named by the reader): two columns at the end of lp_export_rows
-- (RawEventColumn order).
ALTER TABLE lp_events ADD COLUMN install_referrer text;

CREATE OR REPLACE VIEW lp_export_rows AS
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.sent_at_ms, e.received_at_ms,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, e.user_agent, e.os_version, e.app_version,
       e.properties, e.bot, e.bot_reason, e.visitor_id, a.match_type,
       CASE WHEN a.match_type = 'click_id' THEN e.click_id END AS matched_click_id,
       e.click_id_source, e.install_referrer
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq;
