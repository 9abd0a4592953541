package settings

import (
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/policy"
)

// KeyInfo describes one key for the README table and `starter settings`.
type KeyInfo struct {
	// Key is the dotted name (YAML path).
	Key string
	// Default is the default value as text.
	Default string
	// Env is the environment variable.
	Env string
	// Flag is the command-line flag, with its dashes.
	Flag string
	// Type is "bool", "int", "string" or "list" (";"-separated in
	// environment variables and flags).
	Type        string
	Description string
	// Scope is ScopeShared, ScopeWorker, ScopePrompt or ScopeUnused:
	// which programs read the key (see WorkerReads, TakesEffect).
	Scope string
	// hint is said after where the key takes effect (e.g. the worker's
	// counterpart of a prompt setting).
	hint string
}

// TakesEffect says where the key takes effect, for a program that does
// not read it; "" for a ScopeShared key, which every program reads.
func (k KeyInfo) TakesEffect() string {
	var where string
	switch k.Scope {
	case ScopeWorker:
		where = "it takes effect on the worker (worker " + k.Flag + ", or the worker's settings file or environment)"
	case ScopePrompt:
		where = "it takes effect in each prompt, which carries the value of the program that sends it (starter prompt, chat, rpc, compact)"
	case ScopeUnused:
		where = "no program reads it: the worker's auth store chooses each session's credential (starter auth list)"
	default:
		return ""
	}
	if k.hint != "" {
		where += "; " + k.hint
	}
	return where
}

// WorkerReads says whether the worker reads k: its own keys and the shared
// ones, not the settings each prompt carries (ScopePrompt) nor unused ones.
func WorkerReads(k KeyInfo) bool {
	return k.Scope == ScopeShared || k.Scope == ScopeWorker
}

// Scopes of a key: which programs read it, the one statement of that
// fact. The starter rejects a flag of a key it does not read, instead of
// ignoring it in silence; the worker names, in one line each, the keys it
// does not read that were set in its flags, environment or settings file
// (Unread).
const (
	// ScopeShared keys are read by the starter and by the worker: where
	// Temporal, the data dir and the codec key are, the model provider,
	// the stream interval.
	ScopeShared = ""
	// ScopeWorker keys are read by the worker only: its providers, tools
	// policy, session store, scripted model and embedded dev server.
	ScopeWorker = "worker"
	// ScopePrompt keys are read by the programs that send prompts
	// (starter prompt, chat, rpc, compact; the demo) and travel with each
	// prompt in its input; the worker does not read them.
	ScopePrompt = "prompt"
	// ScopeUnused keys are accepted in files for compatibility and read
	// by no program.
	ScopeUnused = "unused"
)

// Keys returns every key in schema order.
func Keys() []KeyInfo {
	d := Defaults()
	out := make([]KeyInfo, 0, len(schema))
	for i := range schema {
		k := &schema[i]
		out = append(out, KeyInfo{
			Key: k.key, Default: k.defaultText(&d), Env: k.env(), Flag: "--" + k.flag(),
			Type: string(k.kind()), Description: k.desc, Scope: k.scope, hint: k.hint,
		})
	}
	return out
}

// kind is a key's type as KeyInfo.Type and --help name it.
type kind string

const (
	kindBool   kind = "bool"
	kindInt    kind = "int"
	kindString kind = "string"
	kindList   kind = "list"
)

// keyDef is one row of the key table: its name, limits, scope and doc. Its
// field in Settings (and so its type) is the one whose JSON path is the
// key's dotted name.
type keyDef struct {
	key  string
	desc string
	// def is the default as a flag would give it ("": the zero value, or
	// what Defaults takes from another package); defText replaces the
	// rendered default in Keys (for values that depend on the machine).
	def, defText string
	// min and max bound ints; limit names max for people ("1 hour").
	min, max int64
	limit    string
	// oneOf, nonEmpty and strCheck restrict strings; strCheck returns a reason.
	oneOf    []string
	nonEmpty bool
	strCheck func(string) string
	// maxItems, item and twice restrict lists: at most maxItems items (0:
	// any), each accepted by item, which returns the identity repeats are
	// judged by (nil: repeats are fine) or a reason; a repeat's reason is
	// twice ("": repeats key[j]). A problem with an item names key[i].
	maxItems int
	item     func(string) (any, string)
	twice    string
	quiet    bool // item's reasons show the item
	// commas: an item may hold "," (a rule, a price, a fault text); in
	// other lists a "," is refused as a mistaken separator.
	commas bool
	// scope says which programs read the key (ScopeShared: both);
	// session: the key is one of a session's own settings (SessionKeys).
	scope   string
	session bool
	// hint follows where the key takes effect (KeyInfo.TakesEffect).
	hint string
}

// field points at the key's field in s (*bool, *int, *int64, *string or
// *[]string): the field whose JSON names, group by group, spell the key.
func (k *keyDef) field(s *Settings) any {
	v := reflect.ValueOf(s).Elem()
	for _, name := range strings.Split(k.key, ".") {
		if v = jsonField(v, name); !v.IsValid() {
			panic("settings: no field for key " + k.key)
		}
	}
	return v.Addr().Interface()
}

// jsonField is the field of struct v named name in JSON, the fields of
// embedded structs included; the zero Value when there is none.
func jsonField(v reflect.Value, name string) reflect.Value {
	for _, f := range reflect.VisibleFields(v.Type()) {
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name && !f.Anonymous {
			return v.FieldByIndex(f.Index)
		}
	}
	return reflect.Value{}
}

func (k *keyDef) kind() kind {
	switch k.field(&Settings{}).(type) {
	case *bool:
		return kindBool
	case *int, *int64:
		return kindInt
	case *[]string:
		return kindList
	}
	return kindString
}

// defaultText is the default as Keys and --help show it.
func (k *keyDef) defaultText(d *Settings) string {
	if k.defText != "" {
		return k.defText
	}
	return k.text(d)
}

// env is the key's environment variable.
func (k *keyDef) env() string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(k.key, ".", "_"))
}

// flag is the key's flag name (without dashes).
func (k *keyDef) flag() string {
	if k.key == "dataDir" {
		return "data-dir"
	}
	return k.key
}

// maxFallbackModels bounds retry.fallbackModels: each one is a usage
// limit away from the next, so a longer list is a mistake, not a plan.
// maxAvailableModels bounds model.available.
const maxFallbackModels, maxAvailableModels = 10, 50

const (
	hourMs   = 3600 * 1000
	dayMs    = 24 * hourMs
	maxToken = 10_000_000 // far above any model's window, far below overflow
)

var schema = []keyDef{
	{key: "dataDir", nonEmpty: true, defText: "$DURABLE_AGENT_HOME or ~/.durable-agent",
		desc: "Directory for sessions, credentials, the dev server database and the default settings file."},

	{key: "retry.enabled", scope: ScopePrompt,
		desc: "Retry overloaded, rate-limited, server and network errors automatically."},
	{key: "retry.maxRetries", scope: ScopePrompt, max: 100,
		desc: "Retries per chain before the prompt fails (attempts after the first error)."},
	{key: "retry.baseDelayMs", scope: ScopePrompt, max: hourMs, limit: "1 hour",
		desc: "First backoff delay in ms; attempt n waits baseDelayMs * 2^(n-1)."},
	{key: "retry.respectRetryAfter", scope: ScopePrompt,
		desc: "Wait at least the provider's retry-after hint (opt-in)."},
	{key: "retry.maxDelayMs", scope: ScopePrompt, max: dayMs, limit: "24 hours",
		desc: "Cap on one backoff delay in ms; a longer hint fails the chain at once (0: no cap)."},
	{key: "retry.fallbackModels", scope: ScopeWorker, maxItems: maxFallbackModels, item: nonEmpty,
		desc: "Models of model.provider to switch to, in order, when a usage limit leaves no credential (the retry then waits 0 ms)."},

	{key: "compaction.enabled", scope: ScopePrompt,
		desc: "Compact the context when it nears the model's window."},
	{key: "compaction.reserveTokens", scope: ScopePrompt, max: maxToken,
		desc: "Tokens kept free for the answer; compaction starts above contextWindow - max(reserveTokens, 15%)."},
	{key: "compaction.keepRecentTokens", scope: ScopePrompt, max: maxToken,
		desc: "Recent tokens kept verbatim when compacting."},
	{key: "compaction.autoContinue", scope: ScopePrompt,
		desc: "Retry the turn once after an overflow compaction."},

	{key: "temporal.address", def: "127.0.0.1:7233", nonEmpty: true, strCheck: checkAddress(1, false),
		desc: "Temporal frontend host:port (also TEMPORAL_ADDRESS)."},
	{key: "temporal.namespace", def: "default", nonEmpty: true,
		desc: "Temporal namespace (also TEMPORAL_NAMESPACE)."},
	{key: "temporal.taskQueue", def: "durable-agent", nonEmpty: true,
		desc: "Task queue the worker polls and the starter uses."},

	{key: "session.store", def: SessionStoreJSONL, scope: ScopeWorker, oneOf: []string{SessionStoreJSONL, SessionStorePostgres},
		desc: "Worker: where sessions live: jsonl (files under dataDir/sessions, one machine or a shared filesystem) or postgres (session.postgresUrl, any number of machines)."},
	{key: "session.postgresUrl", scope: ScopeWorker,
		desc: "Worker: PostgreSQL database of session.store postgres, a postgres:// URL or libpq key=value string (empty: the PG* environment variables); keep the password in PGPASSWORD or ~/.pgpass."},
	{key: "session.worktree", scope: ScopePrompt,
		desc: "Give each new session a git worktree of its workspace's repository on a new branch agent/<session>, made under the worker's dataDir/worktrees; the session works there (starter prompt --worktree; starter diff shows the job's change)."},
	{key: "session.host", scope: ScopePrompt, strCheck: checkHostName,
		desc: "The tool host (a worker's tools.host) a new session is created on, refused before it starts when that host lacks the workspace (starter prompt --host; empty: a host whose workers have the workspace)."},

	{key: "model.provider", def: "scripted", oneOf: Providers,
		desc: "Model provider: scripted (offline fake), anthropic or openai."},
	{key: "model.name", def: "scripted-1", scope: ScopePrompt, nonEmpty: true,
		desc: "Model name sent to the provider."},
	{key: "model.baseUrl", scope: ScopeWorker, strCheck: checkURL,
		desc: "Provider endpoint override (empty: the provider's own)."},
	{key: "model.credential", scope: ScopeUnused,
		desc: "Credential id in the auth store (empty: choose one); never the secret itself."},
	{key: "model.contextWindow", def: "200000", scope: ScopePrompt, min: 1, max: maxToken,
		desc: "Model context window in tokens."},
	{key: "model.maxTokens", def: "4096", scope: ScopePrompt, min: 1, max: maxToken,
		desc: "Maximum answer tokens per call."},
	{key: "model.timeoutMs", def: "600000", scope: ScopePrompt, min: 1000, max: dayMs, limit: "24 hours",
		desc: "Start-to-close timeout of one LLM call in ms."},
	{key: "model.heartbeatTimeoutMs", def: "20000", scope: ScopePrompt, min: 1000, max: dayMs, limit: "24 hours",
		desc: "Heartbeat timeout of the LLM call in ms; a dead worker is noticed after this."},
	{key: "model.thinkingLevel", def: "off", scope: ScopePrompt, oneOf: llm.ThinkingLevels,
		desc: "Reasoning asked of the model: off, minimal, low, medium, high, xhigh or max (Anthropic thinking budget, OpenAI reasoning_effort; docs/providers.md); RPC set_thinking_level changes it per session."},
	{key: "model.available", scope: ScopePrompt, maxItems: maxAvailableModels, item: modelItem, twice: "is listed twice",
		desc: "Models RPC get_available_models lists and set_model/cycle_model may choose, as provider/name (model.provider/model.name is always one)."},
	{key: "model.prices", scope: ScopePrompt, item: priceItem, twice: "prices this model twice", commas: true,
		desc: "Prices in US dollars per million tokens, as provider/name=input,output[,cacheRead[,cacheWrite]]; they override the table of known models shipped with the program (internal/llm/prices); usage.cost of a model in neither is 0."},
	{key: "model.coordinatedBackoff", def: "true", scope: ScopeWorker,
		desc: "Worker: when a provider answers a rate limit with a retry hint, hold every call of that credential until the hint expires, then let one call probe (the windows live in the auth store, shared by the workers of one data directory; docs/spec.md 18.1)."},
	{key: "model.maxConcurrentCalls", scope: ScopeWorker, max: 100_000,
		desc: "Worker: model calls run on a task queue per provider (<temporal.taskQueue>-model-<provider>) and this worker runs at most this many of them at once, per provider (0: on the main queue, no bound)."},
	{key: "model.callsPerSecond", scope: ScopeWorker, strCheck: checkRate,
		desc: "Worker: model calls run on a task queue per provider and Temporal dispatches at most this many per second from it, across all workers (e.g. 2 or 0.5; 0: no limit)."},

	{key: "scripted.faults", scope: ScopePrompt, item: faultItem, quiet: true, commas: true,
		desc: "Scripted provider fault script, one element per call (e.g. \"503 Service Unavailable\", \"overflow\", \"ok\")."},
	{key: "scripted.reply", scope: ScopeWorker,
		desc: "Scripted provider answer text (empty: a deterministic default)."},
	{key: "scripted.latencyMs", scope: ScopeWorker, max: hourMs, limit: "1 hour",
		desc: "Scripted provider delay before each answer in ms."},

	{key: "scripted.streamDelayMs", def: "20", scope: ScopeWorker, max: 60000, limit: "1 minute",
		desc: "Scripted provider pause between streamed words in ms (0: the answer at once)."},
	{key: "stream.intervalMs", def: "200", min: 50, max: 5000, limit: "5 seconds",
		desc: "How often a running model or tool call publishes its output so far as heartbeat details (never history), in ms; followers read them at their own fixed interval only when push cannot reach the worker."},
	{key: "stream.push", scope: ScopeWorker, strCheck: checkAddress(0, true), defText: "none (off)",
		desc: "Worker: host:port of the listener that pushes running calls' live output to followers (port 0 picks one; an address followers can reach in a cluster), heartbeats the fallback; \"off\": heartbeats only."},
	{key: "stream.pushTLS", def: PushTLSAuto, scope: ScopeWorker, oneOf: []string{PushTLSAuto, PushTLSOn, PushTLSOff},
		desc: "Worker: whether stream.push serves HTTPS: auto (when it listens on more than loopback, or stream.pushCertFile is set), on or off; followers accept only the certificate whose SHA-256 the heartbeat details name (docs/live.md)."},
	{key: "stream.pushCertFile", scope: ScopeWorker,
		desc: "Worker: PEM certificate stream.push serves HTTPS with, with stream.pushKeyFile (empty: a self-signed certificate made at start)."},
	{key: "stream.pushKeyFile", scope: ScopeWorker,
		desc: "Worker: PEM private key of stream.pushCertFile."},

	{key: "dev.ip", def: "127.0.0.1", scope: ScopeWorker, strCheck: checkIP,
		desc: "IP address the embedded dev server binds."},
	{key: "dev.port", def: "7233", scope: ScopeWorker, min: 1, max: 65535,
		desc: "Embedded dev server frontend port."},
	{key: "dev.uiPort", def: "8233", scope: ScopeWorker, min: 1, max: 65535,
		desc: "Embedded Temporal Web UI port."},
	{key: "dev.ui", def: "true", scope: ScopeWorker,
		desc: "Start the Temporal Web UI with the dev server."},
	{key: "dev.log", scope: ScopeWorker,
		desc: "Print the embedded dev server's own warnings and errors on the terminal (default: they go to <dataDir>/temporal/server.log, whose path the worker prints once)."},

	{key: "codec.keyFile",
		desc: "File with the 32-byte AES-256 key (raw or base64) that encrypts workflow payloads in Temporal; empty: the key in $DURABLE_AGENT_CODEC_KEY (base64), or no encryption."},
	{key: "tools.enabled", def: strings.Join(AllTools, ";"), scope: ScopePrompt, session: true, item: toolItem,
		desc: "Tools the model may call: read, write, edit, bash, grep, find, ls, and task (sub-agents; not in the default) (e.g. read;grep;find;ls for a read-only agent; empty: none)."},
	{key: "tools.allowedRoots", scope: ScopeWorker,
		desc: "Worker: directories a session's workspace must be in (empty: anywhere; set it on a worker that serves other people's prompts)."},
	{key: "tools.confine", def: "true", scope: ScopeWorker,
		desc: "Worker: keep file tools inside the workspace (\"..\" and escaping symlinks refused)."},
	{key: "tools.envAllow", scope: ScopeWorker,
		desc: "Worker: secret-looking environment variables (*_KEY, *_TOKEN, *_SECRET, *_PASSWORD) that bash may see all the same."},
	{key: "tools.placement", def: ToolPlacementHost, scope: ScopeWorker, oneOf: []string{ToolPlacementHost, ToolPlacementAny},
		desc: "Worker: where a session's tool calls run: host (on the worker host that created the session, which polls its own task queue for them) or any (every worker sees the workspaces, e.g. a shared volume)."},
	{key: "tools.host", scope: ScopeWorker, strCheck: checkHostName, defText: "the machine's host name",
		desc: "Worker: this worker's host name for tools.placement host (workers on one host share it; its tool task queue is <temporal.taskQueue>@<host>)."},
	{key: "tools.hostWaitMs", def: "10000", scope: ScopePrompt, min: 100, max: dayMs, limit: "24 hours",
		desc: "How long a tool call waits for its workspace host before the prompt says it is waiting for that host (it keeps waiting), in ms."},
	{key: "tools.bashTimeoutMs", scope: ScopePrompt, max: dayMs, limit: "24 hours",
		desc: "Timeout of a bash call that names none, in ms (0: none)."},
	{key: "agent.maxTurns", scope: ScopePrompt, max: 1_000_000,
		desc: "Stop a prompt whose model still calls tools after this many turns (0: no limit)."},
	{key: "budget.maxCostUsd", def: "0", scope: ScopePrompt, strCheck: checkUsd,
		desc: "Stop a prompt once its model calls (failed attempts included) cost this many US dollars, by model.prices; a model without prices counts tokens only (0: no limit)."},
	{key: "budget.maxTokens", scope: ScopePrompt, max: 1e12,
		desc: "Stop a prompt once its model calls used this many input plus output tokens (0: no limit)."},
	{key: "budget.maxDurationMs", scope: ScopePrompt, max: 30 * dayMs, limit: "30 days",
		desc: "Stop a prompt this many ms of wall time after it started, on a durable timer; a retry backoff stops at once, a running tool call finishes (0: no limit)."},
	{key: "budget.session.maxCostUsd", def: "0", scope: ScopePrompt, session: true, strCheck: checkUsd,
		desc: "Stop a prompt once the session's model calls, its earlier prompts included, cost this many US dollars (0: no limit)."},
	{key: "budget.session.maxTokens", scope: ScopePrompt, session: true, max: 1e12,
		desc: "Stop a prompt once the session's model calls, its earlier prompts included, used this many input plus output tokens (0: no limit)."},
	{key: "agent.subagents.maxConcurrent", scope: ScopePrompt, min: 1, max: 1000,
		desc: "Sub-agents (the task tool) of one prompt that run at once; further task calls of the same answer wait for a place."},
	{key: "agent.subagents.maxDepth", scope: ScopePrompt, min: 1, max: 100,
		desc: "How deep sub-agents may nest: 1 lets a prompt start sub-agents that cannot start their own; a task call past it gets an error result."},
	{key: "agent.subagents.maxTotal", scope: ScopePrompt, min: 1, max: 100_000,
		desc: "Sub-agents one prompt may start in all; a task call past it gets an error result."},
	{key: "agent.continueAsNewEvents", scope: ScopePrompt, max: 50_000,
		desc: "History length at which a long prompt continues as a new run at a turn boundary (0: 10000)."},
	{key: "agent.steeringMode", def: agent.QueueModeOneAtATime, scope: ScopePrompt, oneOf: agent.QueueModes,
		desc: "How many queued steer messages are delivered after a tool batch: one-at-a-time or all."},
	{key: "agent.followUpMode", def: agent.QueueModeOneAtATime, scope: ScopePrompt, oneOf: agent.QueueModes,
		desc: "How many queued follow_up messages are delivered when the prompt would end: one-at-a-time or all."},
	{key: "agent.systemPrompt", scope: ScopePrompt, strCheck: checkSystemPromptText,
		hint: "only a session's first prompt builds its system prompt: the value counts in a new session",
		desc: "Replaces the system prompt's preamble (who the model is and how it works); the tools' guidelines, the environment and the project's AGENTS.md/CLAUDE.md still follow (empty: the built-in preamble)."},
	{key: "agent.appendSystemPrompt", scope: ScopePrompt, strCheck: checkSystemPromptText,
		hint: "only a session's first prompt builds its system prompt: the value counts in a new session",
		desc: "Text added at the end of the system prompt (empty: nothing)."},
	{key: "tools.requireApproval", scope: ScopePrompt, session: true, item: toolItem,
		hint: "a list every prompt on a worker waits for, whatever its own, is the worker's tools.workerRequireApproval",
		desc: "Tools whose calls wait for approval (starter approve, RPC approve_tool, update approve_tool) before they run, e.g. bash;write;edit (empty: none); the worker's tools.workerRequireApproval is added to it."},
	{key: "tools.workerRequireApproval", scope: ScopeWorker, item: toolItem,
		desc: "Worker: tools whose calls wait for approval in every prompt this worker starts, whatever the prompt's own tools.requireApproval (the two lists are joined), e.g. bash on a worker that serves other people's prompts."},
	{key: "tools.approvalTimeoutMs", def: "1800000", scope: ScopePrompt, session: true, max: 7 * dayMs, limit: "7 days",
		desc: "A tool call not approved within this many ms is denied, and the model reads why (default 1800000, 30 minutes; 0: wait for the decision without end)."},
	{key: "tools.policy", scope: ScopePrompt, session: true, item: policyItem, maxItems: policy.MaxRules - len(policy.Default), quiet: true, commas: true,
		desc: "Approval policy rules, first match wins, before the default policy: ACTION TOOL [prefix:TEXT|regex:RE|path:GLOB], ACTION allow, ask or deny, e.g. deny bash prefix:git push;ask write path:/etc/** (docs/spec.md 15.3)."},
	{key: "tools.sandbox.mode", def: SandboxAuto, scope: ScopeWorker, oneOf: []string{SandboxAuto, SandboxBubblewrap, SandboxOff},
		desc: "Worker: where bash runs: bubblewrap (a fresh sandbox per command; the worker does not start without it), off (as the worker's own user, unsandboxed) or auto (bubblewrap where it works; where not, only worker --dev and the demo start, running bash unsandboxed). See docs/security.md."},
	{key: "tools.sandbox.network", def: SandboxNetworkOff, scope: ScopeWorker, oneOf: SandboxNetworks,
		desc: "Worker: the sandbox's network: off (none, not even the host's loopback), host (the worker's, loopback services included) or allowlist (only tools.sandbox.allowHosts, through an egress proxy per command; an empty allowHosts is refused at start)."},
	{key: "tools.sandbox.memoryMB", scope: ScopeWorker, max: 1 << 20, limit: "1 TiB",
		desc: "Worker: memory limit of each sandboxed command, in MiB: a memory cgroup of its own (its processes together, swap included; the kernel ends one at the limit) where the worker may make one (cgroup v2 delegated, else v1), else RLIMIT_AS, the address space of each process (the worker says which at start) (0: none)."},
	{key: "tools.sandbox.maxProcesses", scope: ScopeWorker, max: 1 << 22, limit: "4194304",
		desc: "Worker: process limit of each sandboxed command: a pids cgroup of its own where the worker may make one, else RLIMIT_NPROC, which counts all processes of the worker's user and exempts root (the worker says so at start) (0: none)."},
	{key: "tools.sandbox.cpuSeconds", scope: ScopeWorker, max: 7 * 24 * 3600, limit: "7 days",
		desc: "Worker: CPU time limit (RLIMIT_CPU) of each process in the sandbox, in seconds; the call's result names it (0: none)."},
	{key: "tools.sandbox.allowHosts", scope: ScopeWorker, item: allowHostItem, quiet: true,
		desc: "Worker: hosts a sandboxed bash may reach through the egress proxy with tools.sandbox.network allowlist: names (registry.npmjs.org), *.example.com (names below example.com), IP addresses; each with an optional :port (none: every port). A name resolving to a loopback, private or link-local address is refused unless that address is listed. HTTP MCP servers (mcp.servers url) are reached at these hosts only, unless the network is host."},

	{key: "codec.keyId", def: DefaultCodecKeyID, nonEmpty: true, strCheck: checkKeyID,
		desc: "Key id recorded in every encrypted payload's metadata (names the key that decrypts it)."},
	{key: "metrics.listen", scope: ScopeWorker, strCheck: checkAddress(0, true), defText: "none (127.0.0.1:9464 with worker --dev)",
		desc: "Worker: host:port that serves Prometheus metrics at /metrics (the SDK's worker metrics and the product's); \"off\": none, also with --dev."},
	{key: "mcp.servers", scope: ScopeWorker, strCheck: checkMCPServers, quiet: true, defText: "none",
		desc: "Worker: MCP servers whose tools a prompt may enable as mcp__<server>__<tool> (tools.enabled, e.g. mcp__fs__*): a mapping of names to {command, args, env, cwd, network, timeoutMs} (stdio, run in the sandbox, network off unless host or allowlist) or {url, headers, timeoutMs} (streamable HTTP); JSON in the environment and flags; $VAR in env and headers is the worker's variable (README \"MCP servers\")."},
	{key: "mcp.allowed", scope: ScopeWorker, item: nonEmpty,
		desc: "Worker: the servers of projects' .mcp.json files the user allowed to start, NAME@FINGERPRINT of the definition in its workspace (starter mcp allow NAME writes it; the worker reads it again at each use)."},
	{key: "mcp.idleMs", scope: ScopeWorker, max: dayMs, limit: "24 hours", defText: "600000",
		desc: "Worker: close an MCP server's connection (and end a stdio server) unused this many ms; the next use starts it again (0: 10 minutes)."},
	{key: "otel.captureContent", scope: ScopeWorker,
		desc: "Worker: put model answers and tool output (each cut to 4 KiB) on the OpenTelemetry spans it exports when OTEL_EXPORTER_OTLP_ENDPOINT is set; false: never."},
	{key: "checkpoints.enabled", def: "true", scope: ScopeWorker,
		desc: "Worker: before a turn's tool calls that may change files, record the workspace in <dataDir>/checkpoints/<session> (starter checkpoints, rewind, fork; docs/spec.md 20)."},
	{key: "checkpoints.keep", def: "100", scope: ScopeWorker, min: 1, max: 100_000,
		desc: "Worker: checkpoints kept per session, the oldest dropped first."},
	{key: "checkpoints.maxBytes", def: "1073741824", scope: ScopeWorker, min: 1 << 20, max: 1 << 40, limit: "1 TiB",
		desc: "Worker: bytes of checkpoints kept per session, the oldest dropped first."},
}

// checkAddress checks a host:port with a port from low to 65535. A
// listener's address (listener) may also be "" or "off" (none; port 0
// picks one); a dialled one may be a gRPC target such as dns:///host:port.
func checkAddress(low int, listener bool) func(string) string {
	return func(v string) string {
		if listener && (v == "" || v == "off") || !listener && strings.Contains(v, "://") {
			return ""
		}
		_, port, err := net.SplitHostPort(v)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < low || n > 65535 {
			if listener {
				return fmt.Sprintf("must be host:port with a port from %d to 65535 (0 picks one), or off", low)
			}
			return fmt.Sprintf("must be host:port with a port from %d to 65535", low)
		}
		return ""
	}
}

// lookupKey finds a key by its exact dotted name.
func lookupKey(name string) *keyDef {
	if i := slices.IndexFunc(schema, func(k keyDef) bool { return k.key == name }); i >= 0 {
		return &schema[i]
	}
	return nil
}

// isGroup reports whether name is a group ("retry") rather than a key.
func isGroup(name string) bool {
	return slices.ContainsFunc(schema, func(k keyDef) bool { return strings.HasPrefix(k.key, name+".") })
}

func checkURL(v string) string {
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be empty or an http(s) URL"
	}
	return ""
}

// checkKeyID keeps key ids short and printable: they travel in payload
// metadata and in error messages.
func checkKeyID(v string) string {
	if !validName(v, "._:-", 64) {
		return "must be at most 64 characters, letters, digits and . _ : -"
	}
	return ""
}

// nonEmpty accepts an item that is not blank.
func nonEmpty(it string) (any, string) {
	if strings.TrimSpace(it) == "" {
		return nil, "must not be empty"
	}
	return it, ""
}

// toolItem accepts the name of a known tool, or of an MCP server's tool
// or tools (mcp__<server>__<tool>, a trailing * for many).
func toolItem(it string) (any, string) {
	if rest, ok := strings.CutPrefix(it, "mcp__"); ok {
		srv, tool, _ := strings.Cut(rest, "__")
		if !validMCPName(srv) || !validName(strings.TrimSuffix(tool, "*"), "_-", 64) || tool == "" {
			return nil, "is not an MCP tool name (mcp__<server>__<tool>, letters, digits, - and _, a trailing * for many)"
		}
		return it, ""
	}
	if !slices.Contains(KnownTools, it) {
		return nil, "is not a tool (known: " + strings.Join(KnownTools, ", ") + ")"
	}
	return it, ""
}

// policyItem accepts one tools.policy rule (internal/policy).
func policyItem(it string) (any, string) {
	if _, err := policy.ParseRule(it); err != nil {
		return nil, fmt.Sprintf("%q: %v", it, err)
	}
	return nil, ""
}

// faultItem rejects a bad fault script at start rather than on the model
// call that reaches it; the parser's reason shows the item.
func faultItem(it string) (any, string) {
	if _, err := scripted.ParseFault(it); err != nil {
		return nil, err.Error()
	}
	return nil, ""
}

// checkHostName keeps a tools.host usable in a task queue name and a log
// line: letters, digits, '.', '-' and '_', at most 253 characters.
func checkHostName(v string) string {
	if !validName(v, ".-_", 253) {
		return "must be at most 253 characters, letters, digits, '.', '-' and '_'"
	}
	return ""
}

func checkIP(v string) string {
	if net.ParseIP(v) == nil {
		return "must be an IP address"
	}
	return ""
}

// allowHostItem accepts a tools.sandbox.allowHosts entry; repeats are
// judged by its normal form (Example.COM and example.com are one).
func allowHostItem(it string) (any, string) {
	p, err := egress.ParsePattern(it)
	if err != nil {
		return nil, err.Error()
	}
	return p.String(), ""
}

// MaxSystemPromptSetting bounds agent.systemPrompt and
// agent.appendSystemPrompt: they travel in each prompt's workflow input,
// which Temporal history keeps.
const MaxSystemPromptSetting = 16 << 10

// checkSystemPromptText keeps a system prompt setting within
// MaxSystemPromptSetting bytes.
func checkSystemPromptText(v string) string {
	if len(v) > MaxSystemPromptSetting {
		return fmt.Sprintf("is %d bytes, at most %d allowed (put long project rules in AGENTS.md instead)", len(v), MaxSystemPromptSetting)
	}
	return ""
}

// maxRate bounds model.callsPerSecond.
const maxRate = 100_000

func checkRate(v string) string {
	if _, ok := parseRate(v); !ok {
		return fmt.Sprintf("must be calls per second from 0 (no limit) to %d, e.g. 2 or 0.5", maxRate)
	}
	return ""
}

// parseRate reads model.callsPerSecond ("" is 0).
func parseRate(v string) (float64, bool) { return parseAmount(strings.TrimSpace(v), maxRate) }
