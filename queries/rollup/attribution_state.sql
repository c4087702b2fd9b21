-- attribution_state: the attribution file's owner and watermark (events up to it are
-- attributed, and only those may be counted). Parameters: none. Idempotent: yes (read-only).
SELECT database_id, attributed_through_seq FROM attr.attribution_state
