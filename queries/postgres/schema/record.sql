-- record: marks migration :name applied (in the transaction that applied it).
INSERT INTO lp_migrations (name) VALUES (:name)
