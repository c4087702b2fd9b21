-- advance_seq: the first seq the next commit may use ($1), written before this one commits.
UPDATE lp_event_seq SET next_seq = $1
