-- create_migrations: the table of applied migrations (by file name), made on first start.
CREATE TABLE IF NOT EXISTS lp_migrations (
    name       text        PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)
