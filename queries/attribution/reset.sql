-- reset: forgets every attribution and click index, so the follower replays the events from
-- the first. Parameters: :database_id, :window_ms. Idempotent: yes.
DELETE FROM attribution;
DELETE FROM ref_clicks;
DELETE FROM fingerprint_clicks;
DELETE FROM resolve_devices;
INSERT OR REPLACE INTO attribution_state (singleton, database_id, attributed_through_seq, through_event_id, attribution_window_ms, recent_from_ms)
VALUES (1, :database_id, 0, NULL, :window_ms, -9223372036854775808);
