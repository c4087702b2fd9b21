-- advance: the rollups count every event through seq :seq (in the transaction that wrote them).
UPDATE lp_derived_state SET through_seq = :seq, updated_at = now() WHERE job = 'rollups'
