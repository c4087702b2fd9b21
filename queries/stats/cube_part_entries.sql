-- cube_part_entries: the entries of one cube part (no row: merged away since its tag was
-- read, which a reader's snapshot rules out). Run on a reader connection (rollup file
-- attached as agg). Parameters: id. Idempotent: yes (read-only).
SELECT entries FROM cube_parts WHERE id = :id
