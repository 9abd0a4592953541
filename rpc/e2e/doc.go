// Package e2e holds the end-to-end tests of RPC mode: they write package
// rpc's command lines to `starter rpc` against the embedded Temporal
// server and a real worker with the scripted model, and read its lines
// back. They live apart from the protocol package so that only they link
// the server (its dependency tree is large), and they are skipped under
// -short.
package e2e
