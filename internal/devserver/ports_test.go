package devserver

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
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
				var inUse *PortInUseError
				if errors.As(err, &inUse) || strings.Contains(err.Error(), "in use") {
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

func TestCheckPortFree_InUseIsStillPortInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	err = checkPortFree("127.0.0.1", port, roleFrontend)
	var inUse *PortInUseError
	if !errors.As(err, &inUse) || inUse.Port != port {
		t.Fatalf("checkPortFree on a taken port = %v (%T), want *PortInUseError", err, err)
	}
}
