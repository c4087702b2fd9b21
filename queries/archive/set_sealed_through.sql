-- set_sealed_through: records how far sealing has looked. Parameter: seq. Idempotent: yes.
UPDATE archive_state SET sealed_through_seq = max(sealed_through_seq, :seq)
