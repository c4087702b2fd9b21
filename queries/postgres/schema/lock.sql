-- lock: makes one daemon at a time run migrations (the others wait here, then find them
-- applied). Held until the migrating transaction ends.
SELECT pg_advisory_xact_lock(hashtext('linkpulse:migrations'))
