-- cube_parts_of_bucket: the stored parts of one cube bucket, to count them or merge them.
-- Parameters (positional): grain, bucket. Idempotent: yes (read-only).
SELECT id, entries FROM cube_parts WHERE grain = ?1 AND bucket = ?2
