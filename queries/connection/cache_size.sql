-- cache_size: the connection's page cache, in KiB. SQLite takes no parameter in a PRAGMA: the
-- store writes the number in place of {kib} (an integer it computes, never outside input).
-- Idempotent: yes.
PRAGMA cache_size = -{kib}
