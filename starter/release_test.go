package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"
)

// releaseConfig is the part of .goreleaser.yaml the test checks.
type releaseConfig struct {
	Builds []struct {
		ID     string   `yaml:"id"`
		Main   string   `yaml:"main"`
		Binary string   `yaml:"binary"`
		Env    []string `yaml:"env"`
		Flags  []string `yaml:"flags"`
		Goos   []string `yaml:"goos"`
		Goarch []string `yaml:"goarch"`
	} `yaml:"builds"`
	Dockers []struct {
		Dockerfile string   `yaml:"dockerfile"`
		Platforms  []string `yaml:"platforms"`
		ExtraFiles []string `yaml:"extra_files"`
	} `yaml:"dockers_v2"`
}

// The release config builds the starter and the worker from main packages
// that exist, for linux and darwin on amd64 and arm64, and the image from
// the Dockerfile with every source directory its go build needs.
func TestReleaseConfig_InStepWithTheRepository(t *testing.T) {
	root := ".."
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg releaseConfig
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	bins := map[string]bool{}
	for _, bd := range cfg.Builds {
		bins[bd.Binary] = true
		list := exec.Command("go", "list", "-f", "{{.Name}}", bd.Main)
		list.Dir = root
		out, err := list.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "main" {
			t.Errorf("build %s: main %s is not a main package: %v %s", bd.ID, bd.Main, err, out)
		}
		if !slices.Equal(bd.Goos, []string{"linux", "darwin"}) || !slices.Equal(bd.Goarch, []string{"amd64", "arm64"}) {
			t.Errorf("build %s: %v × %v, want linux, darwin × amd64, arm64", bd.ID, bd.Goos, bd.Goarch)
		}
		if !slices.Contains(bd.Flags, "-trimpath") || !slices.Contains(bd.Env, "CGO_ENABLED=0") {
			t.Errorf("build %s: flags %v env %v, want -trimpath and CGO_ENABLED=0 as the Dockerfile builds", bd.ID, bd.Flags, bd.Env)
		}
	}
	if !bins["starter"] || !bins["worker"] {
		t.Errorf("release binaries %v, want starter and worker", bins)
	}

	compose, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+build: \.$`).Match(compose) {
		t.Fatal("docker-compose.yml no longer builds the Dockerfile at the root: update the image in .goreleaser.yaml")
	}
	if len(cfg.Dockers) != 1 || cfg.Dockers[0].Dockerfile != "Dockerfile" {
		t.Fatalf("dockers_v2 %+v, want one image from Dockerfile (the one docker-compose.yml builds)", cfg.Dockers)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := regexp.MustCompile(`go build [^&]*?(\./\S+)`).FindAllStringSubmatch(string(dockerfile), -1)
	if len(pkgs) == 0 {
		t.Fatal("the Dockerfile builds no ./package")
	}
	args := []string{"list", "-deps", "-f", "{{.Module}} {{.ImportPath}}"}
	for _, m := range pkgs {
		args = append(args, m[1])
	}
	list := exec.Command("go", args...)
	list.Dir = root
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	mod := "github.com/durableagent/durableagent"
	need := map[string]bool{"go.mod": true, "go.sum": true}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == mod {
			rel := strings.TrimPrefix(f[1], mod+"/")
			need[strings.SplitN(rel, "/", 2)[0]] = true
		}
	}
	for n := range need {
		if !slices.Contains(cfg.Dockers[0].ExtraFiles, n) {
			t.Errorf("the image's go build needs %s but dockers_v2.extra_files lacks it", n)
		}
	}
}

// `go install …/starter@latest` and `…/worker@latest` refuse a module
// whose go.mod has replace or exclude directives.
func TestGoMod_InstallableAtVersion(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if modfile.ModulePath(b) != "github.com/durableagent/durableagent" {
		t.Fatalf("module path %q: update the go install lines of README.md and docs/install.md", modfile.ModulePath(b))
	}
	for i, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "replace" || f[0] == "exclude") {
			t.Errorf("go.mod:%d: %q breaks go install …@version", i+1, l)
		}
	}
}
