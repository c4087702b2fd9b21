-- Migration 0003 of the rollup file: attribution moved to the events database, decided by the
-- ingest writer at commit time (events.match_type, events.matched_click_seq), and the click
-- and time indexes with it (events_by_time, events_ref_clicks, events_fingerprint_clicks).
-- The rollup job now only counts, so its per-event tables go.
DROP TABLE IF EXISTS attribution;
DROP TABLE IF EXISTS event_times;
DROP TABLE IF EXISTS ref_clicks;
DROP TABLE IF EXISTS fingerprint_clicks;
