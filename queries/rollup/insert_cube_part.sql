-- insert_cube_part: one more part of a cube bucket (a pass's cells of that bucket), under a
-- new random tag (readers' caches know a part by it).
-- Parameters: grain, bucket, entries.
-- Idempotent: no (it adds); the watermark advanced in the same transaction prevents reruns.
INSERT INTO cube_parts (grain, bucket, tag, entries) VALUES (:grain, :bucket, random(), :entries)
