package activities_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/auth"
)

// Issue 15 item 6: the secret scan with the key echoed in the provider's
// error.type and error.code, as well as base64, URL-encoded and
// "Basic base64(user:key)" forms in the message: none of these forms
// reaches Temporal (payloads, history), the events, the logs or the
// session file.
func TestSecrets_EchoInEveryProviderFieldAndEncodingNeverLeavesTheWorker(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(testKey))
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + testKey))
	urlEnc := url.QueryEscape(testKey + "/x")
	s := newRealStack(t, func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		body, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": "Incorrect API key " + base64.StdEncoding.EncodeToString([]byte(key)) +
				" sent as Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+key)) +
				" from https://proxy.example/?k=" + url.QueryEscape(key+"/x"),
			"type": "invalid_key " + key, "param": key, "code": key,
		}})
		_, _ = w.Write(body)
	}, 50*time.Millisecond)

	_, evs, err := s.run(t, promptInput(0))
	if err == nil {
		t.Fatal("prompt succeeded, want it to fail on the 401")
	}
	evJSON, _ := json.Marshal(evs)
	sources := map[string][][]byte{
		"temporal payloads":     s.payloads.all(),
		"activity input/output": s.captured,
		"events":                {evJSON},
		"workflow error":        {[]byte(err.Error())},
		"logs":                  {s.logs.Bytes()},
	}
	_ = filepath.Walk(s.dataDir, func(path string, info os.FileInfo, werr error) error {
		if werr != nil || info.IsDir() || strings.HasPrefix(filepath.Base(path), auth.FileName) {
			return nil
		}
		if b, rerr := os.ReadFile(path); rerr == nil {
			sources["file "+path] = append(sources["file "+path], b)
		}
		return nil
	})
	if len(s.payloads.all()) == 0 || len(s.captured) == 0 {
		t.Fatal("nothing captured: the scan would prove nothing")
	}
	needles := []string{testKey, "SECRETSECRET", "0123456789abcdefXYZ", b64, basic, urlEnc}
	for name, blobs := range sources {
		for _, b := range blobs {
			for _, n := range needles {
				if bytes.Contains(b, []byte(n)) {
					t.Errorf("%s contains %q: %.300s", name, n, b)
				}
			}
		}
	}
	if !bytes.Contains(evJSON, []byte("[redacted]")) && !strings.Contains(err.Error(), "[redacted]") {
		t.Fatal("no redacted echo in events or error; the server's key echo never arrived")
	}
}
