-- Migration 0006 (PostgreSQL): the rows of the raw-event export (events.csv, scheduled raw
-- exports) in one place, so that its two page queries (export/events_in_time.sql and
-- export/events_tail.sql) differ only in which events they take and in what order.
-- Columns in RawEventColumn order; matched_click_id is the click the event named, for click_id
-- matches; match_type is NULL for the few events not attributed yet. A plain view: PostgreSQL
-- inlines it, so the pages still use lp_events' indexes and partitions.
CREATE VIEW lp_export_rows AS
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.sent_at_ms, e.received_at_ms,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, e.user_agent, e.os_version, e.app_version,
       e.properties, e.bot, e.bot_reason, e.visitor_id, a.match_type,
       CASE WHEN a.match_type = 'click_id' THEN e.click_id END AS matched_click_id
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq;
