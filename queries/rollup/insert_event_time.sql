-- insert_event_time: records when a rolled-up event happened. Parameters (positional):
-- occurred_at_ms, seq. Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO event_times (occurred_at_ms, seq) VALUES (?, ?)
