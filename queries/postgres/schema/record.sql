-- record: marks migration $1 applied (in the transaction that applied it).
INSERT INTO lp_migrations (name) VALUES ($1)
