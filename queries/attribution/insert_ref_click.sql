-- insert_ref_click: puts a non-bot click before the memory horizon on disk by ref.
-- Parameters: ref, occurred_at_ms, seq. Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO ref_clicks (ref, occurred_at_ms, seq) VALUES (:ref, :occurred_at_ms, :seq)
