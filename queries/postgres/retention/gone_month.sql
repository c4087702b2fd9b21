-- gone_month: the events of one expired month partition (its name, checked against
-- expired_months.sql, is formatted in by the store): the batch the next statements delete.
CREATE TEMP TABLE lp_gone ON COMMIT DROP AS SELECT seq, type FROM %I
