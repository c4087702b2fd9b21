-- file_bytes: the size of the main database file in bytes (its pages times the page size, the
-- WAL not included). Parameters: none. Idempotent: yes (read-only).
SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()
