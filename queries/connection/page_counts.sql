-- page_counts: the connection's own file's free pages and all its pages (to tell whether it is
-- worth a vacuum). Parameters: none. Idempotent: yes (read-only).
SELECT (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_count FROM pragma_page_count)
