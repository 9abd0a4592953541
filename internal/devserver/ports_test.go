package devserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.temporal.io/server/common/log/tag"
)

// notLocalIP is an address of no machine here (TEST-NET-1, RFC 5737) and
// 8.8.8.8 is one of somebody else's; binding either fails with
// EADDRNOTAVAIL unless the host allows non-local binds.
var notLocalIPs = []string{"8.8.8.8", "192.0.2.1"}

func skipIfBindable(t *testing.T, ip string) {
	t.Helper()
	if l, err := net.Listen("tcp", net.JoinHostPort(ip, "0")); err == nil {
		l.Close()
		t.Skipf("this host can bind %s (non-local binds allowed)", ip)
	}
}

func TestStart_AddressNotOfThisMachineIsNotPortInUse(t *testing.T) {
	for _, ip := range notLocalIPs {
		for name, opts := range map[string]Options{
			"frontend port": {IP: ip, Port: 7233, UIPort: NoUI},
			"any port":      {IP: ip, Port: 0, UIPort: NoUI},
		} {
			t.Run(ip+"/"+name, func(t *testing.T) {
				skipIfBindable(t, ip)
				opts.DataDir = t.TempDir()
				s, err := Start(t.Context(), opts)
				if err == nil {
					_ = s.Stop()
					t.Fatalf("Start on %s succeeded", ip)
				}
				if errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "in use") {
					t.Fatalf("Start error %q (%T) says the port is in use; it is the address", err, err)
				}
				var le *ListenError
				if !errors.As(err, &le) || !errors.Is(err, syscall.EADDRNOTAVAIL) {
					t.Fatalf("Start error %v (%T), want a *ListenError wrapping EADDRNOTAVAIL", err, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, syscall.EADDRNOTAVAIL.Error()) || !strings.Contains(msg, ip) ||
					!strings.Contains(msg, "dev.ip") || strings.Contains(msg, "\n") {
					t.Fatalf("error %q: want one line naming %s, the OS's %q and dev.ip", msg, ip, syscall.EADDRNOTAVAIL.Error())
				}
				d, err := openDataDir(opts.DataDir)
				if err != nil {
					t.Fatalf("data dir still locked after failed Start: %v", err)
				}
				_ = d.release()
			})
		}
	}
}

func TestResolvePort_InUseIsStillPortInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	_, err = resolvePort("127.0.0.1", port, roleFrontend, nil)
	var inUse *ListenError
	if !errors.As(err, &inUse) || !errors.Is(err, syscall.EADDRINUSE) || inUse.Port != port {
		t.Fatalf("resolvePort on a taken port = %v (%T), want a *ListenError wrapping EADDRINUSE", err, err)
	}
}

// occupyOnPlan makes Start's port picker lose a race: for each listen plan
// that take says yes to, the port role(plan) is bound by "another program"
// after the pick and before the server binds it. It returns the number of
// plans seen and the ports taken; the listeners close at the test's end.
func occupyOnPlan(t *testing.T, take func(n int) bool, role func(listenPlan) (string, int)) (plans *int, taken *[]int) {
	t.Helper()
	plans, taken = new(int), new([]int)
	testHookPlanned = func(p listenPlan) {
		*plans++
		if !take(*plans) {
			return
		}
		ip, port := role(p)
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("occupy %s:%d: %v", ip, port, err)
		}
		*taken = append(*taken, port)
		t.Cleanup(func() { l.Close() })
	}
	t.Cleanup(func() { testHookPlanned = nil })
	return plans, taken
}

func workerPort(p listenPlan) (string, int)   { return internalIP, p.worker }
func frontendPort(p listenPlan) (string, int) { return p.ip, p.frontend }
func httpPort(p listenPlan) (string, int)     { return p.ip, p.http }

// A port Start picked that another program binds before the server does
// (CI: the worker service's, then a nil listener panicked the test
// binary) makes Start build the server again on new ports; the server
// it returns serves.
func TestStart_PickedPortTakenBeforeBindIsRetried(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct {
		name string
		port func(listenPlan) (string, int)
	}{
		// The server logs Fatal and would serve a nil listener on Start.
		{"worker service", workerPort},
		// The server logs Fatal and panics at once, building the frontend.
		{"frontend picked for Port 0", frontendPort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, taken := occupyOnPlan(t, func(n int) bool { return n == 1 }, tc.port)
			s := startServer(t, Options{DataDir: t.TempDir(), UIPort: NoUI})
			if *plans != 2 || len(*taken) != 1 {
				t.Fatalf("%d plans, ports taken %v; want a second plan after the first lost its port", *plans, *taken)
			}
			c := dial(t, s, "default")
			if _, err := c.CheckHealth(t.Context(), nil); err != nil {
				t.Fatalf("server after the retry: %v", err)
			}
			if strings.HasSuffix(s.FrontendAddress(), ":"+strconv.Itoa((*taken)[0])) {
				t.Fatalf("frontend %s is on the taken port", s.FrontendAddress())
			}
		})
	}
}

// A port the user set that is taken before the server binds it is the
// user's to change: Start says so at once. A port Start picked that is
// taken again and again ends in an error after bindAttempts plans. Either
// way: one line, nothing left running, the data dir free.
func TestStart_PortTakenBeforeBindIsClearError(t *testing.T) {
	skipShort(t)
	userPort, err := pickPort("127.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		opts      Options
		port      func(listenPlan) (string, int)
		wantRole  string
		wantPlans int
		wantMsg   func(port int) string
	}{
		{"frontend port set by the user", Options{Port: userPort}, frontendPort, roleFrontend, 1, func(p int) string {
			return fmt.Sprintf("devserver: port %d on 127.0.0.1 is in use (another Temporal server running? set dev.port)", p)
		}},
		// The frontend's HTTP API fails to listen with an error, not a Fatal.
		{"picked HTTP port taken every time", Options{}, httpPort, roleFrontendHTTP, bindAttempts, func(p int) string {
			return fmt.Sprintf("devserver: port %d on 127.0.0.1, picked for the frontend HTTP service, was taken by another program before the server bound it (%d attempts, each with new ports)", p, bindAttempts)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, taken := occupyOnPlan(t, func(int) bool { return true }, tc.port)
			tc.opts.DataDir, tc.opts.UIPort, tc.opts.Logger = t.TempDir(), NoUI, quietLogger()
			s, err := Start(t.Context(), tc.opts)
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded with its port taken")
			}
			var inUse *ListenError
			if !errors.As(err, &inUse) || inUse.Role != tc.wantRole || !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("Start error %v (%T), want a *ListenError for %q wrapping EADDRINUSE", err, err, tc.wantRole)
			}
			last := (*taken)[len(*taken)-1]
			if *plans != tc.wantPlans || inUse.Port != last {
				t.Fatalf("%d plans, error on port %d; want %d plans, the error on the last taken port %d", *plans, inUse.Port, tc.wantPlans, last)
			}
			if want := tc.wantMsg(last); err.Error() != want {
				t.Fatalf("error = %q\nwant    %q", err, want)
			}
			d, err := openDataDir(tc.opts.DataDir)
			if err != nil {
				t.Fatalf("data dir still locked after failed Start: %v", err)
			}
			_ = d.release()
		})
	}
}

// Start picks its ports outside the kernel's ephemeral range, where no
// other program is handed them by asking for "any free port".
func TestPickRange(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ephLo, ephHi int
		lo, hi       int
	}{
		{"Linux default", 32768, 60999, pickLow, 32767},
		{"BSD, macOS, Windows", 49152, 65535, pickLow, 49151},
		{"range starts low: above it", 1024, 60999, 61000, 65535},
		{"range is everything: every port from pickLow", 1024, 65535, pickLow, 65535},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := pickRange(tc.ephLo, tc.ephHi)
			if lo != tc.lo || hi != tc.hi {
				t.Fatalf("pickRange(%d, %d) = %d, %d; want %d, %d", tc.ephLo, tc.ephHi, lo, hi, tc.lo, tc.hi)
			}
		})
	}
	for in, want := range map[string]bool{"32768\t60999\n": true, "32768 60999": true, "60999 32768": false, "x 1": false, "1": false} {
		if _, _, ok := parsePortRange(in); ok != want {
			t.Errorf("parsePortRange(%q) ok = %v, want %v", in, ok, want)
		}
	}
}

func TestPickPort_FreeDistinctOutsideEphemeralRange(t *testing.T) {
	ephLo, ephHi := ephemeralRange()
	lo, hi := pickRange(ephLo, ephHi)
	if lo == pickLow && hi == 65535 {
		t.Skipf("ephemeral range %d-%d leaves no room outside it", ephLo, ephHi)
	}
	avoid := map[int]bool{}
	for range 20 {
		p, err := pickPort("127.0.0.1", avoid)
		if err != nil {
			t.Fatal(err)
		}
		if avoid[p] || p < lo || p > hi || (p >= ephLo && p <= ephHi) {
			t.Fatalf("picked %d: want one in %d-%d, outside %d-%d, not in %v", p, lo, hi, ephLo, ephHi, avoid)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("picked port %d is not free: %v", p, err)
		}
		l.Close()
		avoid[p] = true
	}
}

// A Fatal the server logs while it is built, about a listener whose port
// is in use, reads as a *ListenError naming the plan's service.
func TestFatalListen_IsPortInUseOfThePlan(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	_, listenErr := net.Listen("tcp", busy.Addr().String())
	if listenErr == nil {
		t.Fatal("second listen on a taken port succeeded")
	}
	fatal := new(fatalLog)
	gate := new(logGate)
	l := serverLogger{log: slog.New(slog.DiscardHandler), gate: gate, fatal: fatal}
	l.With(tag.NewStringTag("service", "worker")).Fatal("Failed to start gRPC listener", tag.Error(listenErr))
	l.Fatal("a later consequence")
	f := fatal.err()
	if f == nil || !strings.HasPrefix(f.Error(), "devserver: build server: Failed to start gRPC listener: ") {
		t.Fatalf("recorded %v, want the first Fatal", f)
	}
	err = listenPlan{frontend: 1, http: 2, history: 3, matching: 4, worker: port}.inUse(f)
	var inUse *ListenError
	if !errors.As(err, &inUse) || !errors.Is(err, syscall.EADDRINUSE) || inUse.Role != roleWorker || inUse.Port != port || inUse.IP != "127.0.0.1" {
		t.Fatalf("error %v (%T), want a *ListenError for the worker's port %d", err, err, port)
	}
	want := fmt.Sprintf("devserver: port %d on 127.0.0.1, picked for the worker service, was taken by another program before the server bound it", port)
	if err.Error() != want {
		t.Fatalf("error = %q\nwant    %q", err, want)
	}
}
