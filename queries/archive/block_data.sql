-- block_data: the deflated rows of one sealed block. Parameter: its id. Idempotent: yes.
SELECT data FROM event_blocks WHERE id = :id
