-- delete_export_file: forgets the file $1, which retention removed.
DELETE FROM lp_export_files WHERE name = $1
