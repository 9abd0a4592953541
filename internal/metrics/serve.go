package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// DevAddress is where `worker --dev` serves metrics unless
// metrics.listen says otherwise.
const DevAddress = "127.0.0.1:9464"

// Off is the metrics.listen value that serves no metrics (also under
// --dev).
const Off = "off"

// Server serves a Handler's metrics on /metrics, with the Go runtime's
// and the process's.
type Server struct {
	Handler *Handler
	ln      net.Listener
	srv     *http.Server
	mp      *sdkmetric.MeterProvider
}

// Serve listens on addr (host:port; port 0 picks one) and serves
// /metrics until Close.
func Serve(addr string) (*Server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h, mp, err := NewHandler(reg, nil)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return nil, fmt.Errorf("metrics.listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s := &Server{Handler: h, ln: ln, mp: mp,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("metrics server stopped: %v\n", err)
		}
	}()
	return s, nil
}

// URL is the address of the metrics page.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// Close stops serving.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.mp.Shutdown(ctx)
}
