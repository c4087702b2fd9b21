-- insert_ref_click: indexes a non-bot click by ref. Parameters (positional): ref,
-- occurred_at_ms, seq, link (its ev.event_links id). Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO ref_clicks (ref, occurred_at_ms, seq, link) VALUES (?, ?, ?, ?)
