-- delete_cube_parts: removes every part of one cube bucket (before its merged part is written).
-- Parameters (positional): grain, bucket. Idempotent: yes.
DELETE FROM cube_parts WHERE grain = ?1 AND bucket = ?2
