// Package cluster tests the product on a real Temporal cluster, as
// docker-compose.yml deploys it but without Docker: a PostgreSQL started
// by internal/pgtest, Temporal's schema set up by the server module's own
// temporal-sql-tool running the compose schema job's commands, the
// Temporal server's own main (go.temporal.io/server/cmd/server) with the
// compose temporal service's environment, two cluster workers
// (cmd/worker-cluster) with their sessions in PostgreSQL, and the starter.
// Workers are SIGKILLed during a model call and during a backoff, and
// PostgreSQL restarts during a backoff; every prompt still completes,
// and the session rows in the database are checked entry by entry.
//
// The tests are skipped under -short and without PostgreSQL, and run on
// Linux only (the children die with the test binary).
package cluster
