// Package activities holds the Temporal activities of a prompt: the model
// call, session writes, session loading and the usage-limit report to the
// auth store. This is where I/O happens.
//
// Contracts:
//   - CallModel never fails for a provider error: the error comes back as
//     data (StopReason "error", ErrorMessage, structured fields), so the
//     workflow's retry policy sees it. It heartbeats on a ticker (worker
//     liveness, not token progress) and honours cancellation by returning
//     an aborted message.
//   - Session writes are idempotent: entry ids are chosen by the workflow,
//     and an entry that already exists is not written again, so a re-run
//     activity never duplicates an entry.
//   - Every model call of a session sends the session's system prompt:
//     the session's first prompt builds it in BeginPrompt
//     (internal/sysprompt), records its hash and sources in the session
//     file and keeps the text beside the session, where CallModel reads
//     it; history carries the hash at most. Summary calls send their own.
//   - Inputs and results carry session ids, entry ids, model names and
//     credential ids; never secrets, and never the whole conversation.
//
// The workflow refers to activities by the Name constants below, so it
// imports this package for types only.
package activities

// Activity names, as registered on the worker and called by the workflow.
const (
	CallModelName             = "CallModel"
	AppendEntriesName         = "AppendEntries"
	LoadSessionName           = "LoadSession"
	MarkUsageLimitReachedName = "MarkUsageLimitReached"
	RunToolName               = "RunTool"
	// BeginPromptName and RecordEntryName are local activities: session
	// reads and writes are short, idempotent and local to the worker.
	BeginPromptName = "BeginPrompt"
	RecordEntryName = "RecordEntry"
)

// Error types of non-retryable activity failures (temporal.ApplicationError.Type()).
const (
	// ErrTypeSessionStore: the session file cannot be read or written
	// (permissions, read-only or full disk, corrupt header).
	ErrTypeSessionStore = "SessionStoreError"
	// ErrTypeBadInput: the activity input is invalid (unknown provider,
	// bad session id).
	ErrTypeBadInput = "BadInputError"
	// ErrTypeCredentials: the auth store cannot be read (its permissions
	// changed, it was corrupted), so the call cannot get its credential.
	ErrTypeCredentials = "CredentialsError"
	// ErrTypeWorkspace: the session's workspace is not usable here
	// (outside tools.allowedRoots, missing, not a directory).
	ErrTypeWorkspace = "WorkspaceError"
	// ErrTypeWorkerStopped: the worker shut down while the tool ran (its
	// context was cancelled by the shutdown, not by an abort) and wrote no
	// result. Retryable: a read-only tool runs again elsewhere; bash has
	// one attempt, and the workflow tells the model the command was
	// interrupted.
	ErrTypeWorkerStopped = "WorkerStoppedError"
	// ErrTypeCallCut: the worker's SDK cancelled the call's context
	// without the workflow asking (heartbeats failed: a starved worker,
	// the server unreachable or no longer knowing the call; or the
	// deadline passed), and the call wrote no result. Retryable; the
	// workflow tells the model that a command's outcome is unknown.
	ErrTypeCallCut = "CallCutError"
)
