package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/durableagent/durableagent/internal/metrics"
)

// Issue 26: the observability profile's Prometheus scrapes the workers on
// the port they serve metrics on, Grafana mounts the provisioning and the
// dashboard, and every metric the dashboard queries is one a worker
// exports (the product's Specs or the SDK's temporal_*).
func TestCompose_ObservabilityProfile(t *testing.T) {
	c := load(t)
	w := service(t, c, "worker")
	listen := w.Environment["DURABLE_AGENT_METRICS_LISTEN"]
	if !strings.HasPrefix(listen, "0.0.0.0:") {
		t.Fatalf("worker DURABLE_AGENT_METRICS_LISTEN %q, want 0.0.0.0:PORT (reachable from the prometheus container)", listen)
	}
	port := strings.TrimPrefix(listen, "0.0.0.0:")
	for _, name := range []string{"prometheus", "grafana"} {
		if s := service(t, c, name); !slices.Contains(s.Profiles, "observability") {
			t.Errorf("%s profiles %v, want observability", name, s.Profiles)
		}
	}
	var cfg struct {
		ScrapeConfigs []struct {
			DNS []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	b, err := os.ReadFile(filepath.Join(c.Dir, "deploy", "prometheus.yml"))
	if err == nil {
		err = yaml.Unmarshal(b, &cfg)
	}
	if err != nil || len(cfg.ScrapeConfigs) == 0 || len(cfg.ScrapeConfigs[0].DNS) == 0 {
		t.Fatalf("deploy/prometheus.yml: %v %+v", err, cfg)
	}
	d := cfg.ScrapeConfigs[0].DNS[0]
	if !slices.Contains(d.Names, "worker") || port != strconv.Itoa(d.Port) {
		t.Errorf("prometheus scrapes %v:%d, want worker:%s", d.Names, d.Port, port)
	}
	for _, v := range service(t, c, "grafana").Volumes {
		host := strings.Split(v, ":")[0]
		if _, err := os.Stat(filepath.Join(c.Dir, host)); err != nil {
			t.Errorf("grafana mounts %s: %v", host, err)
		}
	}

	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	b, err = os.ReadFile(filepath.Join(c.Dir, "deploy", "grafana", "dashboards", "durable-agent.json"))
	if err == nil {
		err = json.Unmarshal(b, &dash)
	}
	if err != nil || len(dash.Panels) == 0 {
		t.Fatalf("dashboard: %v", err)
	}
	known := map[string]bool{}
	for _, s := range metrics.Specs {
		known[s.Name] = true
	}
	used := map[string]bool{}
	name := regexp.MustCompile(`\b(durableagent_[a-z_]+|temporal_[a-z_]+)`)
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			for _, m := range name.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				used[base] = true
				if strings.HasPrefix(base, "durableagent_") && !known[base] {
					t.Errorf("panel %q queries %s, which no worker exports", p.Title, m)
				}
			}
		}
	}
	for _, s := range metrics.Specs {
		if !used[s.Name] {
			t.Errorf("no panel shows %s", s.Name)
		}
	}
}
