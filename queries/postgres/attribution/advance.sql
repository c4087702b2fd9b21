-- advance: attribution is done through seq :seq (in the transaction that wrote what it covers).
UPDATE lp_derived_state SET through_seq = :seq, updated_at = now() WHERE job = 'attribution'
