-- count_cube_parts: how many small parts (under :max_bytes bytes) one cube bucket has: a pass merges
-- them once there are enough. Parameters: grain, bucket, max_bytes.
-- Idempotent: yes (read-only).
SELECT count(*) FROM cube_parts WHERE grain = :grain AND bucket = :bucket AND length(entries) < :max_bytes
