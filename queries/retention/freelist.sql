-- freelist: the events database's free pages, its page size and its auto_vacuum mode (2:
-- incremental, the mode new installations are created in). Run on the events database.
-- Parameters: none. Idempotent: yes (read-only).
SELECT (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size),
       (SELECT auto_vacuum FROM pragma_auto_vacuum)
