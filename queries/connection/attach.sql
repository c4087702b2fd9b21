-- attach: makes another file of the installation readable (and writable) on this connection
-- under a schema name (the events database as "ev", the id index as "ids", the attribution as
-- "attr", the rollups as "agg"), so one statement can join them in one snapshot.
-- Parameters: :path (the file), :schema (its name on this connection). Idempotent: no (a name
-- is attached once per connection, when the connection opens).
ATTACH DATABASE :path AS :schema
