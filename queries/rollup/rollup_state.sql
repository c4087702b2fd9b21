-- rollup_state: the rollup file's owner, watermark, attribution window and the id of the event
-- at the watermark. Parameters: none. Idempotent: yes (read-only).
SELECT database_id, rolled_through_seq, attribution_window_ms, through_event_id FROM rollup_state
