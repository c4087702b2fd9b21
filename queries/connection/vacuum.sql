-- vacuum: rewrites the connection's own file without its free pages, so the file shrinks:
-- after a derived file was emptied to be rebuilt (the rollups' and attribution's resets: the
-- old rows' pages would stay as free space), and at open for a file mostly made of free pages
-- (the id index after migration 0003). Not in a transaction. Parameters: none. Idempotent: yes.
VACUUM main
