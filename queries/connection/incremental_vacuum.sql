-- incremental_vacuum: gives up to {pages} free pages (0: all of them) of the connection's own
-- file back to the filesystem (files made with auto_vacuum = INCREMENTAL; a no-op for others). SQLite takes no
-- parameter here: the store writes the number in place of {pages}. Idempotent: yes.
PRAGMA main.incremental_vacuum({pages})
