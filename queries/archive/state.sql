-- state: how far sealing has looked (see migrations/0006). Idempotent: yes.
SELECT sealed_through_seq FROM archive_state
