-- drop_month: the expired month partition itself (its name formatted in by the store).
DROP TABLE %I
