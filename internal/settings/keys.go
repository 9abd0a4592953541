package settings

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
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
		def := k.defText
		if def == "" {
			def = k.text(k.field(&d))
		}
		out = append(out, KeyInfo{
			Key: k.key, Default: def, Env: k.env(), Flag: "--" + k.flag(),
			Type: k.kind.String(), Description: k.desc, Scope: k.scope, hint: k.hint,
		})
	}
	return out
}

type kind int

const (
	kindBool kind = iota
	kindInt
	kindString
	kindList
)

func (k kind) String() string {
	return [...]string{"bool", "int", "string", "list"}[k]
}

// keyDef is one key: its type, limits and where it lives in Settings.
type keyDef struct {
	key  string
	kind kind
	desc string
	// defText replaces the rendered default in Keys (for values that
	// depend on the machine).
	defText string
	// min and max bound ints; limit names max for people ("1 hour").
	min, max int64
	limit    string
	// oneOf, nonEmpty and strCheck restrict strings; strCheck returns a reason.
	oneOf    []string
	nonEmpty bool
	strCheck func(string) string
	// listCheck restricts lists; it returns the problem with the list or
	// with one item (its key then carries the index: key[1]).
	listCheck func(key string, items []string) *problem
	// field points into a Settings: *bool, *int, *int64, *string or
	// *[]string.
	field func(*Settings) any
	// scope says which programs read the key (ScopeShared: both).
	scope string
	// hint follows where the key takes effect (KeyInfo.TakesEffect).
	hint string
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

const (
	hourMs   = 3600 * 1000
	dayMs    = 24 * hourMs
	maxToken = 10_000_000 // far above any model's window, far below overflow
)

var schema = []keyDef{
	{key: "dataDir", kind: kindString, nonEmpty: true, defText: "$DURABLE_AGENT_HOME or ~/.durable-agent",
		desc:  "Directory for sessions, credentials, the dev server database and the default settings file.",
		field: func(s *Settings) any { return &s.DataDir }},

	{key: "retry.enabled", scope: ScopePrompt, kind: kindBool,
		desc:  "Retry overloaded, rate-limited, server and network errors automatically.",
		field: func(s *Settings) any { return &s.Retry.Enabled }},
	{key: "retry.maxRetries", scope: ScopePrompt, kind: kindInt, max: 100,
		desc:  "Retries per chain before the prompt fails (attempts after the first error).",
		field: func(s *Settings) any { return &s.Retry.MaxRetries }},
	{key: "retry.baseDelayMs", scope: ScopePrompt, kind: kindInt, max: hourMs, limit: "1 hour",
		desc:  "First backoff delay in ms; attempt n waits baseDelayMs * 2^(n-1).",
		field: func(s *Settings) any { return &s.Retry.BaseDelayMs }},
	{key: "retry.respectRetryAfter", scope: ScopePrompt, kind: kindBool,
		desc:  "Wait at least the provider's retry-after hint (opt-in).",
		field: func(s *Settings) any { return &s.Retry.RespectRetryAfter }},
	{key: "retry.maxDelayMs", scope: ScopePrompt, kind: kindInt, max: dayMs, limit: "24 hours",
		desc:  "Cap on one backoff delay in ms; a longer hint fails the chain at once (0: no cap).",
		field: func(s *Settings) any { return &s.Retry.MaxDelayMs }},
	{key: "retry.fallbackModels", scope: ScopeWorker, kind: kindList, listCheck: checkModelList,
		desc:  "Models of model.provider to switch to, in order, when a usage limit leaves no credential (the retry then waits 0 ms).",
		field: func(s *Settings) any { return &s.Retry.FallbackModels }},

	{key: "compaction.enabled", scope: ScopePrompt, kind: kindBool,
		desc:  "Compact the context when it nears the model's window.",
		field: func(s *Settings) any { return &s.Compaction.Enabled }},
	{key: "compaction.reserveTokens", scope: ScopePrompt, kind: kindInt, max: maxToken,
		desc:  "Tokens kept free for the answer; compaction starts above contextWindow - max(reserveTokens, 15%).",
		field: func(s *Settings) any { return &s.Compaction.ReserveTokens }},
	{key: "compaction.keepRecentTokens", scope: ScopePrompt, kind: kindInt, max: maxToken,
		desc:  "Recent tokens kept verbatim when compacting.",
		field: func(s *Settings) any { return &s.Compaction.KeepRecentTokens }},
	{key: "compaction.autoContinue", scope: ScopePrompt, kind: kindBool,
		desc:  "Retry the turn once after an overflow compaction.",
		field: func(s *Settings) any { return &s.Compaction.AutoContinue }},

	{key: "temporal.address", kind: kindString, nonEmpty: true, strCheck: checkHostPort,
		desc:  "Temporal frontend host:port (also TEMPORAL_ADDRESS).",
		field: func(s *Settings) any { return &s.Temporal.Address }},
	{key: "temporal.namespace", kind: kindString, nonEmpty: true,
		desc:  "Temporal namespace (also TEMPORAL_NAMESPACE).",
		field: func(s *Settings) any { return &s.Temporal.Namespace }},
	{key: "temporal.taskQueue", kind: kindString, nonEmpty: true,
		desc:  "Task queue the worker polls and the starter uses.",
		field: func(s *Settings) any { return &s.Temporal.TaskQueue }},

	{key: "session.store", scope: ScopeWorker, kind: kindString, oneOf: SessionStores,
		desc:  "Worker: where sessions live: jsonl (files under dataDir/sessions, one machine or a shared filesystem) or postgres (session.postgresUrl, any number of machines).",
		field: func(s *Settings) any { return &s.Session.Store }},
	{key: "session.postgresUrl", scope: ScopeWorker, kind: kindString,
		desc:  "Worker: PostgreSQL database of session.store postgres, a postgres:// URL or libpq key=value string (empty: the PG* environment variables); keep the password in PGPASSWORD or ~/.pgpass.",
		field: func(s *Settings) any { return &s.Session.PostgresURL }},

	{key: "model.provider", kind: kindString, oneOf: Providers,
		desc:  "Model provider: scripted (offline fake), anthropic or openai.",
		field: func(s *Settings) any { return &s.Model.Provider }},
	{key: "model.name", scope: ScopePrompt, kind: kindString, nonEmpty: true,
		desc:  "Model name sent to the provider.",
		field: func(s *Settings) any { return &s.Model.Name }},
	{key: "model.baseUrl", scope: ScopeWorker, kind: kindString, strCheck: checkURL,
		desc:  "Provider endpoint override (empty: the provider's own).",
		field: func(s *Settings) any { return &s.Model.BaseURL }},
	{key: "model.credential", scope: ScopeUnused, kind: kindString,
		desc:  "Credential id in the auth store (empty: choose one); never the secret itself.",
		field: func(s *Settings) any { return &s.Model.Credential }},
	{key: "model.contextWindow", scope: ScopePrompt, kind: kindInt, min: 1, max: maxToken,
		desc:  "Model context window in tokens.",
		field: func(s *Settings) any { return &s.Model.ContextWindow }},
	{key: "model.maxTokens", scope: ScopePrompt, kind: kindInt, min: 1, max: maxToken,
		desc:  "Maximum answer tokens per call.",
		field: func(s *Settings) any { return &s.Model.MaxTokens }},
	{key: "model.timeoutMs", scope: ScopePrompt, kind: kindInt, min: 1000, max: dayMs, limit: "24 hours",
		desc:  "Start-to-close timeout of one LLM call in ms.",
		field: func(s *Settings) any { return &s.Model.TimeoutMs }},
	{key: "model.heartbeatTimeoutMs", scope: ScopePrompt, kind: kindInt, min: 1000, max: dayMs, limit: "24 hours",
		desc:  "Heartbeat timeout of the LLM call in ms; a dead worker is noticed after this.",
		field: func(s *Settings) any { return &s.Model.HeartbeatTimeoutMs }},
	{key: "model.thinkingLevel", scope: ScopePrompt, kind: kindString, oneOf: llm.ThinkingLevels,
		desc:  "Reasoning asked of the model: off, minimal, low, medium, high or xhigh (Anthropic thinking budget, OpenAI reasoning_effort); RPC set_thinking_level changes it per session.",
		field: func(s *Settings) any { return &s.Model.ThinkingLevel }},
	{key: "model.available", scope: ScopePrompt, kind: kindList, listCheck: checkAvailableModels,
		desc:  "Models RPC get_available_models lists and set_model/cycle_model may choose, as provider/name (model.provider/model.name is always one).",
		field: func(s *Settings) any { return &s.Model.Available }},
	{key: "model.prices", scope: ScopePrompt, kind: kindList, listCheck: checkModelPrices,
		desc:  "Prices in US dollars per million tokens, as provider/name=input,output[,cacheRead[,cacheWrite]]; usage.cost of an unlisted model is 0.",
		field: func(s *Settings) any { return &s.Model.Prices }},

	{key: "scripted.faults", scope: ScopePrompt, kind: kindList, listCheck: checkFaults,
		desc:  "Scripted provider fault script, one element per call (e.g. \"503 Service Unavailable\", \"overflow\", \"ok\").",
		field: func(s *Settings) any { return &s.Scripted.Faults }},
	{key: "scripted.reply", scope: ScopeWorker, kind: kindString,
		desc:  "Scripted provider answer text (empty: a deterministic default).",
		field: func(s *Settings) any { return &s.Scripted.Reply }},
	{key: "scripted.latencyMs", scope: ScopeWorker, kind: kindInt, max: hourMs, limit: "1 hour",
		desc:  "Scripted provider delay before each answer in ms.",
		field: func(s *Settings) any { return &s.Scripted.LatencyMs }},

	{key: "scripted.streamDelayMs", scope: ScopeWorker, kind: kindInt, max: 60000, limit: "1 minute",
		desc:  "Scripted provider pause between streamed words in ms (0: the answer at once).",
		field: func(s *Settings) any { return &s.Scripted.StreamDelayMs }},
	{key: "stream.intervalMs", kind: kindInt, min: 50, max: 5000, limit: "5 seconds",
		desc:  "How often a running model or tool call publishes its output so far (heartbeat details, never history) and clients read it, in ms.",
		field: func(s *Settings) any { return &s.Stream.IntervalMs }},

	{key: "dev.ip", scope: ScopeWorker, kind: kindString, strCheck: checkIP,
		desc:  "IP address the embedded dev server binds.",
		field: func(s *Settings) any { return &s.Dev.IP }},
	{key: "dev.port", scope: ScopeWorker, kind: kindInt, min: 1, max: 65535,
		desc:  "Embedded dev server frontend port.",
		field: func(s *Settings) any { return &s.Dev.Port }},
	{key: "dev.uiPort", scope: ScopeWorker, kind: kindInt, min: 1, max: 65535,
		desc:  "Embedded Temporal Web UI port.",
		field: func(s *Settings) any { return &s.Dev.UIPort }},
	{key: "dev.ui", scope: ScopeWorker, kind: kindBool,
		desc:  "Start the Temporal Web UI with the dev server.",
		field: func(s *Settings) any { return &s.Dev.UI }},

	{key: "codec.keyFile", kind: kindString,
		desc:  "File with the 32-byte AES-256 key (raw or base64) that encrypts workflow payloads in Temporal; empty: the key in $DURABLE_AGENT_CODEC_KEY (base64), or no encryption.",
		field: func(s *Settings) any { return &s.Codec.KeyFile }},
	{key: "tools.enabled", scope: ScopePrompt, kind: kindList, listCheck: checkToolList,
		desc:  "Tools the model may call: read, write, edit, bash, grep, find, ls (e.g. read;grep;find;ls for a read-only agent; empty: none).",
		field: func(s *Settings) any { return &s.Tools.Enabled }},
	{key: "tools.allowedRoots", scope: ScopeWorker, kind: kindList,
		desc:  "Worker: directories a session's workspace must be in (empty: anywhere; set it on a worker that serves other people's prompts).",
		field: func(s *Settings) any { return &s.Tools.AllowedRoots }},
	{key: "tools.confine", scope: ScopeWorker, kind: kindBool,
		desc:  "Worker: keep file tools inside the workspace (\"..\" and escaping symlinks refused).",
		field: func(s *Settings) any { return &s.Tools.Confine }},
	{key: "tools.envAllow", scope: ScopeWorker, kind: kindList,
		desc:  "Worker: secret-looking environment variables (*_KEY, *_TOKEN, *_SECRET, *_PASSWORD) that bash may see all the same.",
		field: func(s *Settings) any { return &s.Tools.EnvAllow }},
	{key: "tools.placement", scope: ScopeWorker, kind: kindString, oneOf: ToolPlacements,
		desc:  "Worker: where a session's tool calls run: host (on the worker host that created the session, which polls its own task queue for them) or any (every worker sees the workspaces, e.g. a shared volume).",
		field: func(s *Settings) any { return &s.Tools.Placement }},
	{key: "tools.host", scope: ScopeWorker, kind: kindString, strCheck: checkHostName, defText: "the machine's host name",
		desc:  "Worker: this worker's host name for tools.placement host (workers on one host share it; its tool task queue is <temporal.taskQueue>@<host>).",
		field: func(s *Settings) any { return &s.Tools.Host }},
	{key: "tools.hostWaitMs", scope: ScopePrompt, kind: kindInt, min: 100, max: dayMs, limit: "24 hours",
		desc:  "How long a tool call waits for its workspace host before the prompt says it is waiting for that host (it keeps waiting), in ms.",
		field: func(s *Settings) any { return &s.Tools.HostWaitMs }},
	{key: "tools.bashTimeoutMs", scope: ScopePrompt, kind: kindInt, max: dayMs, limit: "24 hours",
		desc:  "Timeout of a bash call that names none, in ms (0: none).",
		field: func(s *Settings) any { return &s.Tools.BashTimeoutMs }},
	{key: "agent.maxTurns", scope: ScopePrompt, kind: kindInt, max: 1_000_000,
		desc:  "Stop a prompt whose model still calls tools after this many turns (0: no limit).",
		field: func(s *Settings) any { return &s.Agent.MaxTurns }},
	{key: "agent.continueAsNewEvents", scope: ScopePrompt, kind: kindInt, max: 50_000,
		desc:  "History length at which a long prompt continues as a new run at a turn boundary (0: 10000).",
		field: func(s *Settings) any { return &s.Agent.ContinueAsNewEvents }},
	{key: "agent.steeringMode", scope: ScopePrompt, kind: kindString, oneOf: agent.QueueModes,
		desc:  "How many queued steer messages are delivered after a tool batch: one-at-a-time or all.",
		field: func(s *Settings) any { return &s.Agent.SteeringMode }},
	{key: "agent.followUpMode", scope: ScopePrompt, kind: kindString, oneOf: agent.QueueModes,
		desc:  "How many queued follow_up messages are delivered when the prompt would end: one-at-a-time or all.",
		field: func(s *Settings) any { return &s.Agent.FollowUpMode }},
	{key: "tools.requireApproval", scope: ScopePrompt, kind: kindList, listCheck: checkToolList,
		hint:  "a list every prompt on a worker waits for, whatever its own, is the worker's tools.workerRequireApproval",
		desc:  "Tools whose calls wait for approval (starter approve, RPC approve_tool, update approve_tool) before they run, e.g. bash;write;edit (empty: none); the worker's tools.workerRequireApproval is added to it.",
		field: func(s *Settings) any { return &s.Tools.RequireApproval }},
	{key: "tools.workerRequireApproval", scope: ScopeWorker, kind: kindList, listCheck: checkToolList,
		desc:  "Worker: tools whose calls wait for approval in every prompt this worker starts, whatever the prompt's own tools.requireApproval (the two lists are joined), e.g. bash on a worker that serves other people's prompts.",
		field: func(s *Settings) any { return &s.Tools.WorkerRequireApproval }},
	{key: "tools.approvalTimeoutMs", scope: ScopePrompt, kind: kindInt, max: 7 * dayMs, limit: "7 days",
		desc:  "A tool call not approved within this many ms is denied (0: wait for the decision without end).",
		field: func(s *Settings) any { return &s.Tools.ApprovalTimeoutMs }},

	{key: "codec.keyId", kind: kindString, nonEmpty: true, strCheck: checkKeyID,
		desc:  "Key id recorded in every encrypted payload's metadata (names the key that decrypts it).",
		field: func(s *Settings) any { return &s.Codec.KeyID }},
}

// lookupKey finds a key by its exact dotted name.
func lookupKey(name string) *keyDef {
	for i := range schema {
		if schema[i].key == name {
			return &schema[i]
		}
	}
	return nil
}

// isGroup reports whether name is a group ("retry") rather than a key.
func isGroup(name string) bool {
	for i := range schema {
		if strings.HasPrefix(schema[i].key, name+".") {
			return true
		}
	}
	return false
}

func checkHostPort(v string) string {
	if strings.Contains(v, "://") { // a gRPC target such as dns:///host:port
		return ""
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil || port == "" {
		return "must be host:port"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "must be host:port with a port from 1 to 65535"
	}
	return ""
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
	if len(v) > 64 {
		return "must be at most 64 characters"
	}
	for _, r := range v {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)
		if !ok {
			return "must hold only letters, digits and . _ : -"
		}
	}
	return ""
}

// maxFallbackModels bounds retry.fallbackModels: each one is a usage
// limit away from the next, so a longer list is a mistake, not a plan.
const maxFallbackModels = 10

// checkModelList accepts up to maxFallbackModels distinct, non-empty model
// names.
func checkModelList(key string, items []string) *problem {
	if len(items) > maxFallbackModels {
		return &problem{key: key, value: strings.Join(items, ";"),
			reason: fmt.Sprintf("must hold at most %d models, has %d", maxFallbackModels, len(items))}
	}
	for i, it := range items {
		at := fmt.Sprintf("%s[%d]", key, i)
		if strings.TrimSpace(it) == "" {
			return &problem{key: at, value: it, reason: "must not be empty"}
		}
		for j := range i {
			if items[j] == it {
				return &problem{key: at, value: it, reason: fmt.Sprintf("repeats %s[%d]", key, j)}
			}
		}
	}
	return nil
}

// checkToolList accepts distinct names of known tools.
func checkToolList(key string, items []string) *problem {
	for i, it := range items {
		at := fmt.Sprintf("%s[%d]", key, i)
		known := false
		for _, t := range AllTools {
			known = known || t == it
		}
		if !known {
			return &problem{key: at, value: it, reason: "is not a tool (known: " + strings.Join(AllTools, ", ") + ")"}
		}
		for j := range i {
			if items[j] == it {
				return &problem{key: at, value: it, reason: fmt.Sprintf("repeats %s[%d]", key, j)}
			}
		}
	}
	return nil
}

// checkFaults rejects a bad fault script at start rather than on the model
// call that reaches it.
func checkFaults(key string, items []string) *problem {
	for i, it := range items {
		if _, err := scripted.ParseFault(it); err != nil {
			return &problem{key: fmt.Sprintf("%s[%d]", key, i), value: it, reason: err.Error(), quiet: true}
		}
	}
	return nil
}

// checkHostName keeps a tools.host usable in a task queue name and a log
// line: letters, digits, '.', '-' and '_', at most 253 characters.
func checkHostName(v string) string {
	if len(v) > 253 {
		return "must be at most 253 characters"
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Sprintf("has %q: use letters, digits, '.', '-' and '_'", c)
		}
	}
	return ""
}

func checkIP(v string) string {
	if net.ParseIP(v) == nil {
		return "must be an IP address"
	}
	return ""
}
