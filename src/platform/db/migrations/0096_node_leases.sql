-- Live server processes sharing this database (docs/deployment.md): each leases a snowflake worker id, so
-- two live processes never mint the same ids, and says where it keeps objects, so nodes that would each
-- keep uploads on their own disk are refused at start.
CREATE TABLE node_leases (
  worker_id integer PRIMARY KEY CHECK (worker_id BETWEEN 0 AND 1023),
  node text NOT NULL,
  host text NOT NULL,
  pid integer NOT NULL,
  object_store text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
