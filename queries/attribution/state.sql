-- state: the attribution file's owner, watermark, the id of the event at the watermark and
-- the window in force. Parameters: none. Idempotent: yes (read-only).
SELECT database_id, attributed_through_seq, attribution_window_ms, through_event_id FROM attribution_state
