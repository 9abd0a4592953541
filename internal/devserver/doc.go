// Package devserver runs a single-process Temporal development server inside
// the calling program: frontend, history, matching and worker services of
// go.temporal.io/server, persisted to one SQLite file, plus the optional
// Temporal Web UI.
//
// Contract:
//   - State lives in <DataDir>/temporal.db. Running workflows and pending
//     durable timers survive a restart of the process: Start again with the
//     same DataDir and they resume once a worker polls.
//   - Start returns only when the frontend answers gRPC calls for the
//     namespace (and the UI answers HTTP, when enabled), within a bounded
//     time, or fails with a one-line error naming the cause (port in use,
//     data dir not writable or in use, startup timeout).
//   - The frontend and the UI listen on Options.IP (loopback by default); the
//     internal history, matching and worker services always listen on
//     127.0.0.1 on free ports, so they are never exposed.
//   - The ports Start picks (internal services, Port or UIPort 0) lie
//     outside the kernel's ephemeral range (unless it leaves no room), so
//     no program asking for "any free port" is handed one before the
//     server binds it. If another
//     program binds one first anyway, Start builds the server again on new
//     ports (up to 3 builds in all) and never panics; a port the user set
//     that is taken is a *ListenError at once.
//   - One DataDir is used by at most one running Server (a lock file in the
//     directory enforces it on Unix systems).
//   - Stop shuts the UI and every server service down and releases the data
//     dir; it is idempotent.
//
// The server's dependency tree is large: only the embedded-server entry point
// (e.g. `worker --dev`) should import this package, never unit-tested logic.
package devserver
