-- page_counts: the connection's own file's free pages, all its pages, its page size and its
-- auto_vacuum mode (2: incremental, the mode new events databases are made in, and attribution
-- files from their first reset): whether it is worth a vacuum at open (AppDatabase), and how
-- many free pages the events database can give back (EventStore.releaseFreePages).
-- Parameters: none. Idempotent: yes (read-only).
SELECT (SELECT freelist_count FROM pragma_freelist_count) AS free_pages, (SELECT page_count FROM pragma_page_count) AS pages,
       (SELECT page_size FROM pragma_page_size) AS page_size, (SELECT auto_vacuum FROM pragma_auto_vacuum) AS auto_vacuum
