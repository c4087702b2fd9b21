-- delete_export_file: forgets a file that retention removed.
-- Parameters (positional): name. Idempotent: yes.
DELETE FROM export_files WHERE name = ?
