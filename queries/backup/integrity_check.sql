-- integrity_check: SQLite's full check of a file (every page, index and constraint); a single
-- row "ok" when sound. Parameters: none. Idempotent: yes (read-only).
PRAGMA integrity_check
