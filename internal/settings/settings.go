package settings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/retry"
)

// Settings is the whole schema. JSON names equal the dotted key names; a
// field's meaning, limits and default are its key's row in the key table
// (keys.go), which `starter settings` and the README show.
type Settings struct {
	DataDir     string              `json:"dataDir"`
	Retry       Retry               `json:"retry"`
	Compaction  compaction.Settings `json:"compaction"` // SPEC section 9; travels to the workflow as it is
	Temporal    Temporal            `json:"temporal"`
	Model       Model               `json:"model"`
	Scripted    Scripted            `json:"scripted"`
	Dev         Dev                 `json:"dev"`
	Codec       Codec               `json:"codec"`
	Session     Session             `json:"session"`
	Tools       Tools               `json:"tools"`
	Agent       agent.Settings      `json:"agent"`
	Budget      Budget              `json:"budget"`
	Stream      Stream              `json:"stream"`
	Metrics     Metrics             `json:"metrics"`
	Otel        Otel                `json:"otel"`
	MCP         MCP                 `json:"mcp"`
	Checkpoints Checkpoints         `json:"checkpoints"`

	// file is the settings file Load used (or would create).
	file string
}

// Retry is the `retry` group: the policy's settings, which travel to the
// workflow, plus the fallback models, which stay on the worker (the auth
// store applies them when a usage limit leaves no credential).
type Retry struct {
	retry.Settings
	FallbackModels []string `json:"fallbackModels,omitempty"`
}

// Temporal is the `temporal` group: where the worker and the starter
// connect.
type Temporal struct {
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	TaskQueue string `json:"taskQueue"`
}

// Model is the `model` group: which provider and model answer, and the LLM
// activity's timeouts.
type Model struct {
	Provider           string   `json:"provider"`
	Name               string   `json:"name"`
	BaseURL            string   `json:"baseUrl"`
	Credential         string   `json:"credential"`
	ContextWindow      int      `json:"contextWindow"`
	MaxTokens          int      `json:"maxTokens"`
	TimeoutMs          int64    `json:"timeoutMs"`
	HeartbeatTimeoutMs int64    `json:"heartbeatTimeoutMs"`
	ThinkingLevel      string   `json:"thinkingLevel"`
	Available          []string `json:"available,omitempty"`
	Prices             []string `json:"prices,omitempty"`
	CoordinatedBackoff bool     `json:"coordinatedBackoff"`
	MaxConcurrentCalls int      `json:"maxConcurrentCalls"`
	CallsPerSecond     string   `json:"callsPerSecond"`
}

// CallRate is CallsPerSecond as a number (0: no limit).
func (m Model) CallRate() float64 {
	f, _ := parseRate(m.CallsPerSecond)
	return f
}

// ModelQueues says whether model calls run on a task queue per provider
// (model.maxConcurrentCalls or model.callsPerSecond set).
func (m Model) ModelQueues() bool { return m.MaxConcurrentCalls > 0 || m.CallRate() > 0 }

// Scripted is the `scripted` group: the deterministic fake provider.
type Scripted struct {
	Faults        []string `json:"faults,omitempty"`
	Reply         string   `json:"reply"`
	LatencyMs     int64    `json:"latencyMs"`
	StreamDelayMs int64    `json:"streamDelayMs"`
}

// Dev is the `dev` group: the embedded Temporal dev server and its UI.
type Dev struct {
	IP     string `json:"ip"`
	Port   int    `json:"port"`
	UIPort int    `json:"uiPort"`
	UI     bool   `json:"ui"`
	Log    bool   `json:"log"`
}

// Codec is the `codec` group: encryption of workflow payloads at rest in
// Temporal (package internal/codec). The key itself is never a setting, so
// it never shows up in `starter settings` or a settings file: it is read
// from KeyFile, or from the EnvCodecKey variable.
type Codec struct {
	KeyFile string `json:"keyFile"`
	KeyID   string `json:"keyId"`
}

// Tools is the `tools` group: which tools the model may call and where
// they may act. Enabled and BashTimeoutMs travel with each prompt; the
// rest is the worker's policy.
type Tools struct {
	agent.Tools
	AllowedRoots []string `json:"allowedRoots"`
	Confine      bool     `json:"confine"`
	EnvAllow     []string `json:"envAllow,omitempty"`
	Placement    string   `json:"placement"`
	Host         string   `json:"host,omitempty"`
	agent.Approval
	WorkerRequireApproval []string `json:"workerRequireApproval,omitempty"`
	Sandbox               Sandbox  `json:"sandbox"`
}

// Checkpoints is the `checkpoints` group: the worker's checkpoints of
// each session's workspace (docs/spec.md 20).
type Checkpoints struct {
	Enabled  bool  `json:"enabled"`
	Keep     int   `json:"keep"`
	MaxBytes int64 `json:"maxBytes"`
}

// Sandbox is the `tools.sandbox` group: the worker's bash sandbox.
type Sandbox struct {
	Mode         string   `json:"mode"`
	Network      string   `json:"network"`
	MemoryMB     int64    `json:"memoryMB"`
	MaxProcesses int64    `json:"maxProcesses"`
	CPUSeconds   int64    `json:"cpuSeconds"`
	AllowHosts   []string `json:"allowHosts,omitempty"`
}

// Sandbox modes (tools.sandbox.mode).
const (
	// SandboxAuto is bubblewrap where it works; where it does not, worker
	// --dev and the demo run bash unsandboxed (saying so) and any other
	// worker refuses to start.
	SandboxAuto = "auto"
	// SandboxBubblewrap requires bubblewrap: the worker does not start
	// without it.
	SandboxBubblewrap = "bubblewrap"
	// SandboxOff runs bash as the worker's own user, unsandboxed.
	SandboxOff = "off"
)

// Sandbox networks (tools.sandbox.network).
const (
	SandboxNetworkOff       = "off"
	SandboxNetworkHost      = "host"
	SandboxNetworkAllowlist = "allowlist"
)

// SandboxNetworks lists the values of tools.sandbox.network.
var SandboxNetworks = []string{SandboxNetworkOff, SandboxNetworkHost, SandboxNetworkAllowlist}

// Tool placements (tools.placement).
const (
	ToolPlacementHost = "host"
	ToolPlacementAny  = "any"
)

// Stream is the `stream` group: live output.
type Stream struct {
	IntervalMs   int64  `json:"intervalMs"`
	Push         string `json:"push"`
	PushTLS      string `json:"pushTLS"`
	PushCertFile string `json:"pushCertFile"`
	PushKeyFile  string `json:"pushKeyFile"`
}

// Values of stream.pushTLS.
const (
	PushTLSAuto = "auto"
	PushTLSOn   = "on"
	PushTLSOff  = "off"
)

// Metrics is the `metrics` group: the worker's Prometheus metrics
// (package internal/metrics).
type Metrics struct {
	Listen string `json:"listen"`
}

// Otel is the `otel` group: the worker's OpenTelemetry traces (package
// internal/tracing; exported when OTEL_EXPORTER_OTLP_ENDPOINT is set).
type Otel struct {
	CaptureContent bool `json:"captureContent"`
}

// AllTools are the tools the agent has, in the terminal agent's order.
var AllTools = []string{"read", "write", "edit", "bash", "grep", "find", "ls"}

// KnownTools are the tools tools.enabled may name: AllTools, the default,
// and task (sub-agents), which a user turns on.
var KnownTools = append(slices.Clip(AllTools), "task")

// Providers are the accepted model.provider values.
var Providers = []string{"scripted", "anthropic", "openai"}

// DefaultCodecKeyID is codec.keyId's default.
const DefaultCodecKeyID = "default"

// FileName is the settings file's name inside the data dir.
const FileName = "settings.yaml"

// Environment variables that are not keys but steer Load.
const (
	// EnvPrefix starts every key's environment variable.
	EnvPrefix = "DURABLE_AGENT_"
	// EnvHome is the default data dir.
	EnvHome = "DURABLE_AGENT_HOME"
	// EnvConfig names the settings file.
	EnvConfig = "DURABLE_AGENT_CONFIG"
	// EnvCodecKey holds the payload codec's key as base64 (see Codec). It
	// is not a key of the schema: its value is a secret and is never read
	// into Settings.
	EnvCodecKey = "DURABLE_AGENT_CODEC_KEY"
	// EnvWorkerBin names a worker binary for `starter demo` to run instead
	// of finding or building one. It is read by the starter, not by Load.
	EnvWorkerBin = "DURABLE_AGENT_WORKER_BIN"
)

// Defaults returns the built-in values: each key's default in the key
// table, the workflow's retry and compaction settings and the sub-agent
// limits of their packages, and the data dir taken from
// $DURABLE_AGENT_HOME or ~/.durable-agent.
func Defaults() Settings {
	s := Settings{
		DataDir:    defaultDataDir(),
		Retry:      Retry{Settings: retry.DefaultSettings()},
		Compaction: compaction.DefaultSettings(),
		Agent:      agent.Settings{SubAgents: agent.DefaultSubAgentLimits},
	}
	for i := range schema {
		if k := &schema[i]; k.def != "" {
			x, p := k.convert(rawValue{text: k.def})
			if p != nil {
				panic("settings: default of " + k.key + ": " + p.reason)
			}
			k.set(&s, x)
		}
	}
	return s
}

// File returns the settings file in use: the one Load read, or, when none
// was named, <DataDir>/settings.yaml (which SetBool creates).
func (s Settings) File() string {
	if s.file != "" {
		return s.file
	}
	return filepath.Join(s.DataDir, FileName)
}

// getenv returns a variable's value; an empty variable counts as unset,
// as it does for viper.
func getenv(name string) (string, bool) {
	v := os.Getenv(name)
	return v, v != ""
}

func defaultDataDir() string {
	if h, ok := getenv(EnvHome); ok {
		return expandPath(h)
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".durable-agent")
}

// expandPath turns a leading "~" into the home directory, as a shell
// would, so "~/x" works in the file and in quoted environment values, and
// makes the path absolute so messages and File() name one place no matter
// the working directory ("" stays "", and p stays relative if that fails).
func expandPath(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		home, _ := os.UserHomeDir()
		p = filepath.Join(home, p[1:])
	}
	if a, err := filepath.Abs(p); err == nil && p != "" {
		return a
	}
	return p
}
