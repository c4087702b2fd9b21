-- advance_seq: the first seq the next commit may use (:next_seq), written before this one commits.
UPDATE lp_event_seq SET next_seq = :next_seq
