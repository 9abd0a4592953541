package client

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	client "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/settings"
)

// DialTimeout bounds how long Dial waits for Temporal to answer.
const DialTimeout = 5 * time.Second

// Dial connects to the Temporal server of the settings the way every
// Temporal program does (see ClientOptions: temporal.toml, TEMPORAL_*
// variables, API key, TLS and mTLS), failing fast with a one-line error
// naming the address and, for a TLS failure, the TLS problem.
func Dial(ctx context.Context, s settings.Settings, logger *slog.Logger) (client.Client, error) {
	return DialEnv(ctx, s, logger, nil)
}

// DialEnv is Dial with the environment read through env (nil: the
// process environment) and the given client interceptors (the starter's
// tracing).
func DialEnv(ctx context.Context, s settings.Settings, logger *slog.Logger, env envconfig.EnvLookup, ics ...interceptor.ClientInterceptor) (client.Client, error) {
	opts, err := ClientOptions(s, env)
	if err != nil {
		return nil, err
	}
	opts.Interceptors = append(opts.Interceptors, ics...)
	return dial(ctx, s, logger, opts)
}

// DialLocal connects to an embedded dev server (worker --dev, the demo):
// plaintext at temporal.address, ignoring the client profile, whose API
// key or certificates are meant for a real cluster.
func DialLocal(ctx context.Context, s settings.Settings, logger *slog.Logger) (client.Client, error) {
	return dial(ctx, s, logger, client.Options{HostPort: s.Temporal.Address, Namespace: s.Temporal.Namespace})
}

// ClientOptions are the client options of the settings: the client
// profile of go.temporal.io/sdk/contrib/envconfig (temporal.toml and the
// TEMPORAL_* variables docs/cluster.md lists), with temporal.address and
// temporal.namespace on top whenever they differ from their defaults,
// and filling in what the profile leaves empty. The profile's remote
// codec is not used (codec.keyFile).
func ClientOptions(s settings.Settings, env envconfig.EnvLookup) (client.Options, error) {
	if env == nil {
		env = envconfig.EnvLookupOS
	}
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{EnvLookup: env})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client profile: %s", line.Fold(err.Error()))
	}
	def := settings.Defaults().Temporal
	if s.Temporal.Address != def.Address || prof.Address == "" {
		prof.Address = s.Temporal.Address
	}
	if s.Temporal.Namespace != def.Namespace || prof.Namespace == "" {
		prof.Namespace = s.Temporal.Namespace
	}
	opts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client profile for %s: %s", prof.Address, line.Fold(err.Error()))
	}
	return opts, nil
}

func dial(ctx context.Context, s settings.Settings, logger *slog.Logger, opts client.Options) (client.Client, error) {
	if logger == nil {
		logger = WarnLogger()
	}
	// With a codec key configured, every payload is encrypted before it
	// reaches Temporal (worker and starter alike, as both dial here).
	cdc, err := codec.FromSettings(s)
	if err != nil {
		return nil, err
	}
	opts.DataConverter = cdc.DataConverter()
	opts.Logger = sdklog.NewStructuredLogger(logger)
	// A heartbeat RPC that times out must not cut the activity that sent
	// it (activities.HeartbeatGuard): a worker's client needs it; other
	// clients send no heartbeats, and it passes their RPCs through.
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions,
		grpc.WithChainUnaryInterceptor(activities.HeartbeatGuard))
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%w at %s (namespace %q%s): %s", ErrTemporalUnreachable, opts.HostPort, opts.Namespace,
			security(opts), describeDialError(err, opts))
	}
	return c, nil
}

// security says how the connection authenticates, for the error message.
func security(opts client.Options) string {
	var parts []string
	if t := opts.ConnectionOptions.TLS; t != nil {
		if len(t.Certificates) > 0 {
			parts = append(parts, "TLS with client certificate")
		} else {
			parts = append(parts, "TLS")
		}
	}
	if opts.Credentials != nil {
		parts = append(parts, "API key")
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// describeDialError reduces a gRPC dial error to its cause on one line;
// TLS failures say so first, with a hint at the setting to check.
func describeDialError(err error, opts client.Options) string {
	msg := line.Fold(err.Error())
	tlsOn := opts.ConnectionOptions.TLS != nil
	for _, marker := range []string{"x509: ", "tls: "} {
		i := strings.Index(msg, marker)
		if i < 0 {
			continue
		}
		cause := strings.TrimRight(msg[i:], `")`)
		hint := ""
		switch {
		case !tlsOn:
		case strings.Contains(cause, "unknown authority"):
			hint = " (the server's certificate is not signed by the CA the client trusts: check TEMPORAL_TLS_SERVER_CA_CERT_PATH or the profile's server_ca_cert_path)"
		case strings.Contains(cause, "first record does not look like a TLS handshake"):
			hint = " (the server does not speak TLS: unset TEMPORAL_TLS or the profile's tls section)"
		case strings.Contains(cause, "certificate required"), strings.Contains(cause, "bad certificate"),
			strings.Contains(cause, "unknown certificate authority"):
			hint = " (the server rejected the client certificate: check TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"
		case strings.Contains(cause, "not valid for"), strings.Contains(cause, "doesn't contain any IP SANs"):
			hint = " (the server's certificate names another host: check the address or TEMPORAL_TLS_SERVER_NAME)"
		}
		return "TLS handshake failed: " + cause + hint
	}
	if tlsOn && (strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset by peer")) {
		// With TLS 1.3 the client finishes its side of the handshake
		// first; a server that refuses the client's certificate (or its
		// absence) then closes the connection, and the client may see
		// only the closed socket, not the server's alert.
		return "TLS handshake failed: the server closed the connection during the handshake (" + msg + ")" +
			" (the server may require a client certificate or refuse this one: check TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"
	}
	if !tlsOn && (strings.Contains(msg, "error reading server preface") || strings.Contains(msg, "connection reset by peer")) {
		return msg + " (the server may require TLS: set TEMPORAL_TLS=true, or a CA with TEMPORAL_TLS_SERVER_CA_CERT_PATH)"
	}
	return msg
}

// WarnLogger logs warnings and above to stderr: the SDK's logger unless a
// caller gives one.
func WarnLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
