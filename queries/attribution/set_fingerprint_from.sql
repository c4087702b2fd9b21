-- set_fingerprint_from: moves the start of the on-disk fingerprint index's span forward (never
-- back): clicks before it are looked up in the raw events from then on, and its rows may be
-- deleted. Parameters: from_ms (a whole UTC hour). Idempotent: yes.
UPDATE attribution_state SET fingerprint_from_ms = :from_ms WHERE fingerprint_from_ms < :from_ms
