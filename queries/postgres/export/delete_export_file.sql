-- delete_export_file: forgets the file :name, which retention removed.
DELETE FROM lp_export_files WHERE name = :name
