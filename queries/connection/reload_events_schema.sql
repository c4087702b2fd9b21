-- reload_events_schema: on a derived file's connection (the events database attached as "ev"),
-- after the events database's migrations ran on another connection: a read of ev's schema
-- table, whose schema-cookie check has SQLite load ev's schema again. Without it, a statement
-- first compiled after a migration that added a column (event_rows gaining install_referrer)
-- is compiled against the schema this connection loaded before, and fails (the events view's
-- two arms then differ in width).
-- Parameters: none. Idempotent: yes (read-only).
SELECT count(*) FROM ev.sqlite_master
