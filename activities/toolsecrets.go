package activities

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"go.temporal.io/sdk/activity"

	"github.com/durableagent/durableagent/internal/tools"
)

// SecretLister is implemented by Credentials that can list the secrets
// they hold, so that tool output is redacted of them.
type SecretLister interface {
	// Secrets returns every secret the store holds now (read at call
	// time: a credential added while the worker runs is included). An
	// error's text must not contain a secret.
	Secrets() ([]string, error)
}

// knownSecrets returns every secret value this worker knows, read at call
// time: the credential store's (when Credentials is a SecretLister), the
// values of the environment variables withheld from bash
// (tools.SecretEnvValues: provider keys, the codec key, database URLs and
// their passwords, tokens; a name in tools.envAllow is given to bash on
// purpose and left out) and a.Secrets (the worker's settings).
func (a *Activities) knownSecrets(ctx context.Context) []string {
	out := append([]string(nil), a.Secrets...)
	out = append(out, tools.SecretEnvValues(os.Environ(), a.ToolPolicy.EnvAllow)...)
	if l, ok := a.Credentials.(SecretLister); ok {
		s, err := l.Secrets()
		if err != nil {
			// The store cannot be read now: redact what else is known.
			activity.GetLogger(ctx).Warn("tool output: list the credential store's secrets to redact them", "error", err)
		}
		out = append(out, s...)
	}
	return out
}

// outputRedactor is the redactor of tool output: the worker's known
// secrets and their encodings (messageRedactor.known).
func (a *Activities) outputRedactor(ctx context.Context) *messageRedactor {
	return newMessageRedactor(a.knownSecrets(ctx)...)
}

// result redacts a tool's result before it is stored or previewed: its
// content, and the full-output file of a truncated bash command.
func (r *messageRedactor) result(ctx context.Context, res tools.Result) tools.Result {
	res.Content = r.known(res.Content)
	if path, _ := res.Details["fullOutputPath"].(string); path != "" {
		if err := r.file(path); err != nil {
			activity.GetLogger(ctx).Warn("tool output: redact the full output file", "path", path, "error", err)
		}
	}
	return res
}

// fileChunk is how much of a file maskStream reads at a time.
const fileChunk = 1 << 20

// file replaces the secrets, their URL-encoded forms and the base64 text
// that encodes them (the part of it that holds secret bits) in the file at
// path with the redaction marker, streaming: the file may be far larger
// than memory. A file without any is left untouched; one with some is
// replaced by a redacted copy (same directory, mode 0600, renamed over
// it).
func (r *messageRedactor) file(path string) (err error) {
	needles := append(append(append([]string(nil), r.secrets...), r.escaped...), r.coreForms()...)
	if len(needles) == 0 {
		return nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("redact %s: %w", path, err)
		}
	}()
	longest := 0
	for _, n := range needles {
		longest = max(longest, len(n))
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	// A first pass only looks: most outputs hold no secret, and a copy
	// of a large file for nothing would cost as much as the command's
	// own writing.
	if found, err := maskStream(in, io.Discard, needles, longest); err != nil || !found {
		return err
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".redact-*.log")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	_, err = maskStream(in, tmp, needles, longest)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// maskStream copies in to out with every needle (none longer than
// longest) replaced by the redaction marker, a chunk at a time, and says
// whether it found any.
func maskStream(in io.Reader, out io.Writer, needles []string, longest int) (found bool, err error) {
	var pending []byte
	buf := make([]byte, fileChunk)
	for {
		n, rerr := io.ReadFull(in, buf)
		data := append(pending, buf[:n]...)
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !eof {
			return found, rerr
		}
		spans := findAll(data, needles)
		found = found || len(spans) > 0
		// Everything before cut is final: a needle that starts before it
		// ends inside data (no needle is longer than longest), and one
		// that starts after it is found again with the bytes carried on.
		cut := len(data)
		if !eof {
			cut = max(0, len(data)-(longest-1))
			for _, s := range spans {
				if s[0] < cut && s[1] > cut {
					cut = s[1]
				}
			}
		}
		if _, err := out.Write(maskSpans(data[:cut], spans)); err != nil {
			return found, err
		}
		pending = append([]byte(nil), data[cut:]...)
		if eof {
			return found, nil
		}
	}
}

// coreForms are the base64 texts that hold the secrets' bits.
func (r *messageRedactor) coreForms() []string {
	out := make([]string, 0, len(r.b64))
	for _, f := range r.b64 {
		out = append(out, f.core)
	}
	return out
}

// findAll returns the spans [start, end) of every occurrence of the
// needles in data, sorted by start and merged where they overlap.
func findAll(data []byte, needles []string) [][2]int {
	var spans [][2]int
	for _, n := range needles {
		for off := 0; ; {
			i := bytes.Index(data[off:], []byte(n))
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{off + i, off + i + len(n)})
			off += i + len(n)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var merged [][2]int
	for _, s := range spans {
		if k := len(merged) - 1; k >= 0 && s[0] <= merged[k][1] {
			merged[k][1] = max(merged[k][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// maskSpans returns data with the spans that lie in it replaced by the
// redaction marker (spans beyond len(data) belong to the next chunk).
func maskSpans(data []byte, spans [][2]int) []byte {
	var out []byte
	last := 0
	for _, s := range spans {
		if s[1] > len(data) {
			break
		}
		out = append(out, data[last:s[0]]...)
		out = append(out, redacted...)
		last = s[1]
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}
