-- delete_export_file: forgets a file that retention removed.
-- Parameters: name. Idempotent: yes.
DELETE FROM export_files WHERE name = :name
