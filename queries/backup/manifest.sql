-- manifest: every fact of a backup, (name, value). Fails when the file is no Linkpulse backup
-- (no such table). Run on a backup file. Parameters: none. Idempotent: yes (read-only).
SELECT name, value FROM linkpulse_backup
