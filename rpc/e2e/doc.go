// Package e2e holds the end-to-end tests of RPC mode: the Go client
// (package rpc) drives `starter rpc` against the embedded Temporal server
// and a real worker with the scripted model. They live apart from the
// client's unit tests so that only they link the server (its dependency
// tree is large), and they are skipped under -short.
package e2e
