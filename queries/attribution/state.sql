-- state: the attribution file's owner, watermark, the window in force, the id of the event at
-- the watermark, the memory horizon of the click indexes and the start of the on-disk
-- fingerprint index's span. Parameters: none. Idempotent: yes (read-only).
SELECT database_id, attributed_through_seq, attribution_window_ms, through_event_id, recent_from_ms, fingerprint_from_ms
FROM attribution_state
