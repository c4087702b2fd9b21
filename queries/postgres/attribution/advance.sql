-- advance: attribution is done through seq $1 (in the transaction that wrote what it covers).
UPDATE lp_derived_state SET through_seq = $1, updated_at = now() WHERE job = 'attribution'
