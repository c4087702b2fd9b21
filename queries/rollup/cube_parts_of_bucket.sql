-- cube_parts_of_bucket: the small stored parts of one cube bucket (under :max_bytes bytes), to count
-- them or merge them; larger parts are left as they are. length() of a blob is read from the
-- record header, without the blob. Parameters: grain, bucket, max_bytes.
-- Idempotent: yes (read-only).
SELECT id, entries FROM cube_parts WHERE grain = :grain AND bucket = :bucket AND length(entries) < :max_bytes
