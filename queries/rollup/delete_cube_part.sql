-- delete_cube_part: removes one cube part (merged into a new one in the same transaction).
-- Parameters: id. Idempotent: yes.
DELETE FROM cube_parts WHERE id = :id
