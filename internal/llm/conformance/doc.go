// Package conformance holds the provider conformance suite: one table of
// response shapes (text, thinking, tool calls, stop reasons, cut streams,
// in-stream errors, a tool loop's follow-up request) that every HTTP
// provider (anthropic, openai) is run against, each shape written in the
// provider's own wire format by a small encoder. What a provider must make
// of each shape is the package llm contract; the suite is its test
// (conformance_test.go) and runs in plain `go test ./internal/llm/...`.
// The package has no non-test code beyond this comment.
package conformance
