-- insert_cube_part: one more part of a cube bucket (a pass's cells of that bucket).
-- Parameters (positional): grain, bucket, entries.
-- Idempotent: no (it adds); the watermark advanced in the same transaction prevents reruns.
INSERT INTO cube_parts (grain, bucket, entries) VALUES (?1, ?2, ?3)
