CREATE TABLE t (id INT);
-- legacy: drop after v2
CREATE INDEX t_id ON t (id);
