-- advance: the rollups count every event through seq $1 (in the transaction that wrote them).
UPDATE lp_derived_state SET through_seq = $1, updated_at = now() WHERE job = 'rollups'
