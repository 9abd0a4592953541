package tools

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// Issue 37 item 6: a secret written in pieces reaches the output masked
// whole, wherever the pieces were cut: no piece of it reaches the output
// tail, the snapshots or the full-output file, and the rest of the output
// arrives byte for byte. Spec 14.4.4.
func TestMaskWriter_SecretInPiecesIsMaskedWhole(t *testing.T) {
	const secret = "sk-ant-REDACT-PROBE-0123456789abcdef"
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + secret))
	text := "before " + secret + " between " + b64 + " sk- skip " + secret[:10] + " end"
	want := "before [redacted] between " + b64[:7] + "[redacted]"
	for cut := 1; cut < len(text); cut++ {
		var out bytes.Buffer
		var seen []string
		w := newMaskWriter(writerFunc(func(p []byte) {
			out.Write(p)
			seen = append(seen, out.String())
		}), []string{secret, b64Core(secret)})
		w.Write([]byte(text[:cut]))
		w.Write([]byte(text[cut:]))
		w.(*maskWriter).Flush()
		got := out.String()
		if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " sk- skip "+secret[:10]+" end") {
			t.Fatalf("cut at %d: %q", cut, got)
		}
		for _, s := range seen {
			for i := len("sk-ant-"); i+8 <= len(secret); i++ {
				if strings.Contains(s, secret[i:i+8]) {
					t.Fatalf("cut at %d: %q of the secret passed: %q", cut, secret[i:i+8], s)
				}
			}
		}
	}
}

// b64Core is the base64 text of "user:"+secret that holds the secret's
// bits only (the redactor's forms of a secret, at the offset 5 % 3).
func b64Core(secret string) string {
	text := base64.RawStdEncoding.EncodeToString(append(make([]byte, 2), secret...))
	return text[(8*2+5)/6 : 8*(2+len(secret))/6]
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
