package codec

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const uiOrigin = "http://127.0.0.1:8233"

// The codec server decodes what the Web UI posts to <endpoint>/decode and
// lets only the UI's origin read the answer.
func TestHandler_DecodesForTheUIOrigin(t *testing.T) {
	c := New(mustKey(t, "k1", 1))
	sealed, err := c.Encode([]*commonpb.Payload{jsonPayload(t, "the user's prompt")})
	if err != nil {
		t.Fatal(err)
	}
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: sealed})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c, UIOrigins(uiOrigin)))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	req.Header.Set("Origin", uiOrigin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("decode status %d: %s", resp.StatusCode, out)
	}
	var got commonpb.Payloads
	if err := protojson.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode answer %s: %v", out, err)
	}
	if len(got.Payloads) != 1 || string(got.Payloads[0].Data) != `"the user's prompt"` {
		t.Fatalf("decoded %v", got.Payloads)
	}
	if o := resp.Header.Get("Access-Control-Allow-Origin"); o != uiOrigin {
		t.Errorf("Access-Control-Allow-Origin %q, want %q", o, uiOrigin)
	}
}

// CORS preflight: the UI's origins (127.0.0.1 and localhost) are admitted
// with the headers the UI sends; any other origin gets no CORS headers.
func TestHandler_CORSPreflight(t *testing.T) {
	srv := httptest.NewServer(Handler(New(mustKey(t, "k1", 1)), UIOrigins(uiOrigin)))
	defer srv.Close()
	cases := []struct {
		origin string
		admit  bool
	}{
		{uiOrigin, true},
		{"http://localhost:8233", true},
		{"http://localhost:9999", false},
		{"https://evil.example", false},
	}
	for _, tc := range cases {
		t.Run(tc.origin, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Get("Access-Control-Allow-Origin")
			if tc.admit && (got != tc.origin || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace")) {
				t.Errorf("origin %s not admitted: headers %v", tc.origin, resp.Header)
			}
			if !tc.admit && got != "" {
				t.Errorf("origin %s admitted: Access-Control-Allow-Origin %q", tc.origin, got)
			}
		})
	}
}

// A payload the server's key cannot open is a 400 naming the key id,
// never a silent pass-through and never the key.
func TestHandler_WrongKeyIsAnError(t *testing.T) {
	sealed, _ := New(mustKey(t, "k1", 1)).Encode([]*commonpb.Payload{jsonPayload(t, "x")})
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: sealed})
	srv := httptest.NewServer(Handler(New(mustKey(t, "k1", 2)), nil))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/decode", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), "wrong key") {
		t.Fatalf("status %d body %q, want 400 naming a wrong key", resp.StatusCode, out)
	}
}

// The server refuses any address that is not loopback.
func TestLoopbackAddress(t *testing.T) {
	cases := []struct {
		in, want string
		err      error
	}{
		{":8234", "127.0.0.1:8234", nil},
		{"localhost:8234", "127.0.0.1:8234", nil},
		{"127.0.0.1:0", "127.0.0.1:0", nil},
		{"[::1]:8234", "[::1]:8234", nil},
		{"0.0.0.0:8234", "", ErrNotLoopback},
		{"192.168.1.5:8234", "", ErrNotLoopback},
		{"example.com:8234", "", ErrNotLoopback},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := LoopbackAddress(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("LoopbackAddress(%q) = %q, %v; want %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("LoopbackAddress(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := LoopbackAddress("no-port"); err == nil {
		t.Error("an address without a port was accepted")
	}
}

// Serve listens where asked and answers; Close stops it.
func TestServe_ListensOnLoopback(t *testing.T) {
	s, err := Serve("127.0.0.1:0", Handler(New(mustKey(t, "k1", 1)), nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q", s.URL())
	}
	resp, err := http.Post(s.URL()+"/decode", "application/json", strings.NewReader(`{"payloads":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Serve("0.0.0.0:0", nil); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("Serve on 0.0.0.0: %v, want ErrNotLoopback", err)
	}
}
