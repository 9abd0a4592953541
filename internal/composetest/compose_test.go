// Package composetest checks docker-compose.yml, which cannot run on a
// machine without a Docker engine: services, ports, the worker's wiring to
// Temporal, healthchecks and volumes.
package composetest

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type service struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Ports       []string          `yaml:"ports"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Volumes []string `yaml:"volumes"`
}

type compose struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

func load(t *testing.T) compose {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatalf("docker-compose.yml is not valid YAML: %v", err)
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// The compose stack is a real cluster: PostgreSQL, Temporal, its UI, and
// the worker built from this repository, wired through TEMPORAL_ADDRESS.
func TestCompose_Wiring(t *testing.T) {
	c := load(t)
	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "worker"} {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("service %q missing", name)
		}
	}
	tmp := c.Services["temporal"]
	if !strings.HasPrefix(tmp.Image, "temporalio/auto-setup:") && !strings.HasPrefix(tmp.Image, "temporalio/server:") {
		t.Errorf("temporal image %q", tmp.Image)
	}
	if !contains(tmp.Ports, "7233:7233") {
		t.Errorf("temporal ports %v, want 7233:7233", tmp.Ports)
	}
	if tmp.Environment["DB"] != "postgres12" || tmp.Environment["POSTGRES_SEEDS"] != "postgresql" {
		t.Errorf("temporal is not on PostgreSQL: %v", tmp.Environment)
	}
	if !contains(c.Services["temporal-ui"].Ports, "8080:8080") || c.Services["temporal-ui"].Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
		t.Errorf("temporal-ui wiring: %+v", c.Services["temporal-ui"])
	}
	w := c.Services["worker"]
	if w.Build == nil {
		t.Error("worker is not built from this repository")
	}
	if w.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
		t.Errorf("worker TEMPORAL_ADDRESS %q, want temporal:7233", w.Environment["TEMPORAL_ADDRESS"])
	}
	if w.DependsOn["temporal"].Condition != "service_healthy" {
		t.Error("worker does not wait for a healthy temporal")
	}
	if tmp.DependsOn["postgresql"].Condition != "service_healthy" {
		t.Error("temporal does not wait for a healthy postgresql")
	}
	for _, name := range []string{"postgresql", "temporal"} {
		if hc := c.Services[name].Healthcheck; hc == nil || len(hc.Test) == 0 {
			t.Errorf("service %s has no healthcheck", name)
		}
	}
	pg := c.Services["postgresql"]
	if len(pg.Volumes) == 0 || !strings.HasSuffix(pg.Volumes[0], ":/var/lib/postgresql/data") {
		t.Errorf("postgresql has no data volume: %v", pg.Volumes)
	}
	vol := strings.SplitN(pg.Volumes[0], ":", 2)[0]
	if _, ok := c.Volumes[vol]; !ok {
		t.Errorf("volume %q is not declared", vol)
	}
	if len(w.Volumes) == 0 {
		t.Error("worker has no volume for the session store")
	}
}

// The Dockerfile builds the worker from this module.
func TestDockerfile_BuildsWorker(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"FROM golang:1.26.8", "go build -o /out/worker ./worker", "ENTRYPOINT [\"/usr/local/bin/worker\"]"} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
