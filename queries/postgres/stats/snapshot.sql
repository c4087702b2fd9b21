-- snapshot: the reads of one stats answer see one state of the database (its rollup rows and
-- raw edges count the same events). Ended by COMMIT.
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY
