-- cache_size: the page cache of one file of the connection (its own, "main", or an attached
-- one by its schema name), in KiB. SQLite takes no parameter in a PRAGMA: the store writes the
-- schema name in place of {schema} (one of its own constant names) and the number in place of
-- {kib} (an integer it computes), never outside input.
-- Idempotent: yes.
PRAGMA {schema}.cache_size = -{kib}
