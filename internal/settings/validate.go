package settings

import (
	"fmt"
	"os"
)

// Validate checks every key's own limits, then the rules that tie keys
// together, and returns the first problem as an *Error naming the key and
// the value. It stats DataDir: an existing file there is an error (a
// missing directory is fine; it is created on use).
func (s Settings) Validate() error {
	for i := range schema {
		k := &schema[i]
		if p := k.check(k.get(&s)); p != nil {
			return p.err("")
		}
	}
	cw, m := s.Model.ContextWindow, s.Model
	for _, c := range []struct {
		bad    bool
		key    string
		value  any
		reason string
	}{
		{s.Compaction.ReserveTokens >= cw, "compaction.reserveTokens", s.Compaction.ReserveTokens, fmt.Sprintf("must be less than model.contextWindow (%d)", cw)},
		{s.Compaction.KeepRecentTokens >= cw, "compaction.keepRecentTokens", s.Compaction.KeepRecentTokens, fmt.Sprintf("must be less than model.contextWindow (%d)", cw)},
		{m.MaxTokens > cw, "model.maxTokens", m.MaxTokens, fmt.Sprintf("must be at most model.contextWindow (%d)", cw)},
		{m.HeartbeatTimeoutMs > m.TimeoutMs, "model.heartbeatTimeoutMs", m.HeartbeatTimeoutMs, fmt.Sprintf("must be at most model.timeoutMs (%d)", m.TimeoutMs)},
		{s.Dev.Port == s.Dev.UIPort, "dev.uiPort", s.Dev.UIPort, "must differ from dev.port"},
	} {
		if c.bad {
			return (&problem{key: c.key, value: fmt.Sprint(c.value), reason: c.reason}).err("")
		}
	}
	if p := checkPushTLS(s.Stream); p != nil {
		return p.err("")
	}
	if fi, err := os.Stat(s.DataDir); err == nil && !fi.IsDir() {
		return (&problem{key: "dataDir", value: s.DataDir, reason: "must be a directory, not a file"}).err("")
	}
	return nil
}

// checkPushTLS checks the stream.push TLS keys together: a certificate
// and its key come as a pair, and a certificate is served only with TLS.
// Whether the files exist and match is checked where they are read, when
// the worker starts its push listener (internal/app).
func checkPushTLS(s Stream) *problem {
	switch {
	case s.PushCertFile != "" && s.PushKeyFile == "":
		return &problem{key: "stream.pushKeyFile", reason: "must be set with stream.pushCertFile (the certificate's private key)", quiet: true}
	case s.PushKeyFile != "" && s.PushCertFile == "":
		return &problem{key: "stream.pushCertFile", reason: "must be set with stream.pushKeyFile (the key's certificate)", quiet: true}
	case s.PushCertFile != "" && s.PushTLS == PushTLSOff:
		return &problem{key: "stream.pushTLS", value: s.PushTLS, reason: "must not be off when stream.pushCertFile is set"}
	}
	return nil
}
