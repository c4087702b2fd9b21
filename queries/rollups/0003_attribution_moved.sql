-- Migration 0003 of the rollup file: attribution moved to a file of its own
-- (linkpulse-attribution.sqlite, queries/attributions/), decided by the attribution follower
-- right after each commit; the click and time indexes went with it (event times are indexed
-- in the events database). The rollup job now only counts.
DROP TABLE IF EXISTS attribution;
DROP TABLE IF EXISTS event_times;
DROP TABLE IF EXISTS ref_clicks;
DROP TABLE IF EXISTS fingerprint_clicks;
