-- lock_seq: the first seq this commit may use. Locks lp_event_seq's row until the commit ends,
-- so commits of all daemons take seqs one after another, in commit order (see migration 0001).
SELECT next_seq FROM lp_event_seq FOR UPDATE
