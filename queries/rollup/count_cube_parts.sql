-- count_cube_parts: how many parts one cube bucket has (a pass merges them past a limit).
-- Parameters (positional): grain, bucket. Idempotent: yes (read-only).
SELECT count(*) FROM cube_parts WHERE grain = ?1 AND bucket = ?2
