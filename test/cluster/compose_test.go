package cluster

// This file reads docker-compose.yml, which cannot run on a machine
// without a Docker engine: compose_wiring_test.go and
// compose_readme_test.go check the wiring (services, images, ports, the
// worker's connection to Temporal and PostgreSQL, healthchecks, volumes),
// and the cluster tests run the temporal service's environment and the
// schema job's commands for real.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Service is the part of a compose service the checks read.
type Service struct {
	Image         string            `yaml:"image"`
	Build         any               `yaml:"build"`
	ContainerName string            `yaml:"container_name"`
	Ports         []string          `yaml:"ports"`
	Environment   map[string]string `yaml:"environment"`
	DependsOn     map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Volumes    []string  `yaml:"volumes"`
	Entrypoint []string  `yaml:"entrypoint"`
	Command    yaml.Node `yaml:"command"`
	Profiles   []string  `yaml:"profiles"`
	Restart    string    `yaml:"restart"`
}

// Compose is the file.
type Compose struct {
	Name     string             `yaml:"name"`
	Services map[string]Service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
	// Dir is the directory of the file (the repository root).
	Dir string `yaml:"-"`
}

// RepoRoot is the repository root (the directory of go.mod).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Load reads <repo>/docker-compose.yml.
func Load() (*Compose, error) {
	path := filepath.Join(RepoRoot(), "docker-compose.yml")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Dir = filepath.Dir(path)
	return &c, nil
}

// CommandLines returns a service's command as lines of a shell script:
// the lines of an `sh -c` script, or the command itself as one line.
func (s Service) CommandLines() []string {
	var parts []string
	switch s.Command.Kind {
	case yaml.ScalarNode:
		parts = []string{s.Command.Value}
	case yaml.SequenceNode:
		for _, n := range s.Command.Content {
			parts = append(parts, n.Value)
		}
	}
	var lines []string
	for _, p := range parts {
		for _, l := range strings.Split(p, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// HostPath maps a path inside a service's container to the repository
// file mounted there by a bind volume ("./dir:/container/dir"), "" if no
// bind mount covers it.
func (c *Compose) HostPath(s Service, containerPath string) string {
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || !strings.HasPrefix(parts[0], ".") {
			continue
		}
		if rest, ok := strings.CutPrefix(containerPath, parts[1]); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			return filepath.Join(c.Dir, parts[0], rest)
		}
	}
	return ""
}

// Image splits an image reference into name and tag.
func Image(ref string) (name, tag string) {
	name, tag, _ = strings.Cut(ref, ":")
	return name, tag
}
