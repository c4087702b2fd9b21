-- set_indexed_through: records that every event through a seq is in the id index (the last
-- slice of a merge round, in its transaction). Run on the id index file.
-- Parameters: seq. Idempotent: yes.
UPDATE index_state SET indexed_through_seq = :seq
