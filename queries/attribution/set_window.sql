-- set_window: records the attribution window in force. Parameters: window_ms.
-- Idempotent: yes.
UPDATE attribution_state SET attribution_window_ms = :window_ms
