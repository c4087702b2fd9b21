-- cube_parts_of_bucket: the small stored parts of one cube bucket (under ?3 bytes), to count
-- them or merge them; larger parts are left as they are. length() of a blob is read from the
-- record header, without the blob. Parameters (positional): grain, bucket, max_bytes.
-- Idempotent: yes (read-only).
SELECT id, entries FROM cube_parts WHERE grain = ?1 AND bucket = ?2 AND length(entries) < ?3
