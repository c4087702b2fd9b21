-- claim: the first statement of a sealing transaction, a write that changes nothing: it takes
-- the events database's write lock (waiting out another writer: ingest, or a second process
-- sealing) before anything is read, so the rows and the state read next are the latest and no
-- other process can seal them meanwhile. Only the events database is locked (the transaction is
-- DEFERRED: an IMMEDIATE one would lock every attached file). Idempotent: yes.
UPDATE archive_state SET sealed_through_seq = sealed_through_seq
