package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	tmotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// durationBuckets are the histogram buckets of every timer, in seconds:
// from a fast tool call to a long model call or backoff.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}

// Handler is the worker's client.MetricsHandler: the SDK's OpenTelemetry
// handler with monotonic counters (Prometheus counters), except the
// instruments of upDown, whose counters may go down (Prometheus gauges).
type Handler struct {
	mono, updown tmotel.MetricsHandler
}

// NewHandler is a Handler whose metrics reg collects (Serve gives it a
// fresh registry; a test may pass its own). Errors of the meter (an
// instrument asked for twice with different kinds) are passed to onError
// (nil: ignored), never a panic in a workflow.
func NewHandler(reg prometheus.Registerer, onError func(error)) (*Handler, *sdkmetric.MeterProvider, error) {
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: prometheus exporter: %w", err)
	}
	view := sdkmetric.NewView(sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: durationBuckets}})
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(view))
	if onError == nil {
		onError = func(error) {}
	}
	meter := mp.Meter("github.com/durableagent/durableagent")
	return &Handler{
		mono:   tmotel.NewMetricsHandler(tmotel.MetricsHandlerOptions{Meter: meter, OnError: onError, UseMonotonicCounters: true}),
		updown: tmotel.NewMetricsHandler(tmotel.MetricsHandlerOptions{Meter: meter, OnError: onError}),
	}, mp, nil
}

// WithTags is the handler with tags added to every metric.
func (h *Handler) WithTags(tags map[string]string) client.MetricsHandler {
	return &Handler{
		mono:   h.mono.WithTags(tags).(tmotel.MetricsHandler),
		updown: h.updown.WithTags(tags).(tmotel.MetricsHandler),
	}
}

// Counter is a monotonic counter, or one that may go down for the
// instruments of upDown.
func (h *Handler) Counter(name string) client.MetricsCounter {
	if upDown[name] {
		return h.updown.Counter(name)
	}
	return h.mono.Counter(name)
}

// Gauge is the SDK handler's gauge.
func (h *Handler) Gauge(name string) client.MetricsGauge { return h.mono.Gauge(name) }

// Timer is a histogram in seconds.
func (h *Handler) Timer(name string) client.MetricsTimer { return h.mono.Timer(name) }

// Unwrap gives tmotel.ExtractMetricsHandler the OpenTelemetry handler
// (float counters: cost).
func (h *Handler) Unwrap() client.MetricsHandler { return h.mono }
