-- insert_ref_click: indexes a non-bot click by ref. Parameters (positional): ref,
-- occurred_at_ms, seq, campaign, source, medium. Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO ref_clicks (ref, occurred_at_ms, seq, campaign, source, medium) VALUES (?, ?, ?, ?, ?, ?)
