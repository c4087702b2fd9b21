-- lock: a write that changes nothing, run first in a round so that the round holds the
-- attribution file's write lock before it reads the watermark (two rounds, of this process or
-- another, can never attribute the same events). Parameters: none. Idempotent: yes.
UPDATE attribution_state SET attributed_through_seq = attributed_through_seq
