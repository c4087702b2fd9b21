-- rollup_state: the rollups' watermark, the database they belong to, and the attribution
-- window they were computed with. No parameters. Idempotent: yes (read-only).
SELECT database_id, rolled_through_seq, attribution_window_ms FROM rollup_state
