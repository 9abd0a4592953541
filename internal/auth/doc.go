// Package auth holds the credentials of model providers on the worker.
//
// Contract:
//   - Secrets stay here: everything that leaves the package towards
//     Temporal (activity results, events) carries credential ids only, and
//     Entry, the listing type, has no secret field.
//   - A provider may hold several credentials (API keys, or OAuth tokens
//     kept as opaque secrets). A session keeps one credential, chosen by a
//     stable hash of its id, until a usage limit blocks it; then it moves to
//     the next unblocked credential and stays there.
//   - MarkUsageLimit blocks the session's credential until the
//     provider's retry hint expires (DefaultBlockMs without one) and says
//     whether another credential was free; with none free and fallback
//     models configured, the session moves to the next model instead.
//   - Rate-limit windows (window.go) coordinate backoff per credential:
//     RateLimited opens a window for a provider's retry hint, Admit holds
//     every caller until it ends and then grants one probe lease, whose
//     outcome extends (RateLimited) or clears (Settle) the window; Release
//     passes the lease on, and a lease lapses if its holder dies. The
//     rules are written once (Windows) and applied through a WindowStore,
//     which runs each under its own lock: File here, the PostgreSQL
//     windows of a cluster in internal/pgstore, whose tests run their one
//     contract against both.
//   - File persists credentials, blocks, windows and session assignments in
//     auth.json (mode 0600, refused when group/world-readable), under an
//     exclusive file lock per operation, so block state survives worker
//     restarts and several worker processes on one machine agree.
//   - With no stored credential for a provider, the environment variable
//     of EnvVars (ANTHROPIC_API_KEY, OPENAI_API_KEY) is an implicit
//     credential with id "env:<provider>".
package auth
