-- count_cube_parts: how many small parts (under ?3 bytes) one cube bucket has: a pass merges
-- them once there are enough. Parameters (positional): grain, bucket, max_bytes.
-- Idempotent: yes (read-only).
SELECT count(*) FROM cube_parts WHERE grain = ?1 AND bucket = ?2 AND length(entries) < ?3
