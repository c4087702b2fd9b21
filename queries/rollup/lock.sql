-- lock: a write that changes nothing, run first in a pass so that the pass holds the rollup
-- file's write lock (and only that one) before it reads the watermark: two passes can never
-- count the same events. Parameters: none. Idempotent: yes.
UPDATE rollup_state SET rolled_through_seq = rolled_through_seq
