package cluster

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/durableagent/durableagent/internal/settings"
)

func load(t *testing.T) *Compose {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

func service(t *testing.T, c *Compose, name string) Service {
	t.Helper()
	s, ok := c.Services[name]
	if !ok {
		t.Fatalf("service %q missing", name)
	}
	return s
}

// The stack is the official pattern: PostgreSQL, a one-shot admin-tools
// job for the schema, temporalio/server, a one-shot namespace job, the
// UI, then the worker and the starter, each waiting for what it needs.
func TestCompose_OfficialPattern(t *testing.T) {
	c := load(t)
	pg := service(t, c, "postgresql")
	schema := service(t, c, "temporal-admin-tools")
	tmp := service(t, c, "temporal")
	ns := service(t, c, "temporal-create-namespace")
	ui := service(t, c, "temporal-ui")

	if name, _ := Image(tmp.Image); name != "temporalio/server" {
		t.Errorf("temporal image %q, want temporalio/server (auto-setup is deprecated)", tmp.Image)
	}
	_, serverTag := Image(tmp.Image)
	// test/cluster runs the server and SQL tool built from go.mod's
	// go.temporal.io/server: the images must be that release, or the
	// tested server is not the deployed one.
	if want := strings.TrimPrefix(goModVersion(t, "go.temporal.io/server"), "v"); serverTag != want {
		t.Errorf("temporal image tag %q, want go.mod's go.temporal.io/server %s (what test/cluster runs)", serverTag, want)
	}
	for _, job := range []Service{schema, ns} {
		if name, tag := Image(job.Image); name != "temporalio/admin-tools" || tag != serverTag {
			t.Errorf("job image %q, want temporalio/admin-tools:%s like the server", job.Image, serverTag)
		}
	}
	if name, tag := Image(ui.Image); name != "temporalio/ui" || tag == "" || tag == "latest" {
		t.Errorf("ui image %q, want a pinned temporalio/ui", ui.Image)
	}

	waits := []struct{ who, on, cond string }{
		{"temporal-admin-tools", "postgresql", "service_healthy"},
		{"temporal", "temporal-admin-tools", "service_completed_successfully"},
		{"temporal-create-namespace", "temporal", "service_healthy"},
		{"temporal-ui", "temporal", "service_healthy"},
		{"worker", "temporal-create-namespace", "service_completed_successfully"},
	}
	for _, w := range waits {
		if got := c.Services[w.who].DependsOn[w.on].Condition; got != w.cond {
			t.Errorf("%s waits for %s with %q, want %q", w.who, w.on, got, w.cond)
		}
	}
	for _, name := range []string{"postgresql", "temporal"} {
		if hc := c.Services[name].Healthcheck; hc == nil || len(hc.Test) == 0 {
			t.Errorf("service %s has no healthcheck", name)
		}
	}
	if len(pg.Volumes) == 0 || !strings.HasSuffix(pg.Volumes[0], ":/var/lib/postgresql/data") {
		t.Errorf("postgresql has no data volume: %v", pg.Volumes)
	} else if vol := strings.SplitN(pg.Volumes[0], ":", 2)[0]; c.Volumes == nil || !hasKey(c.Volumes, vol) {
		t.Errorf("volume %q is not declared", vol)
	}
	if !slices.Contains(tmp.Ports, "7233:7233") || !slices.Contains(ui.Ports, "8080:8080") {
		t.Errorf("ports: temporal %v (want 7233:7233), ui %v (want 8080:8080)", tmp.Ports, ui.Ports)
	}
	if ui.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
		t.Errorf("ui TEMPORAL_ADDRESS %q", ui.Environment["TEMPORAL_ADDRESS"])
	}
}

// Temporal is on the compose PostgreSQL with its credentials, through the
// variables of the server's embedded config template; the schema job
// creates both databases with temporal-sql-tool and the embedded schemas.
func TestCompose_TemporalOnPostgres(t *testing.T) {
	c := load(t)
	pg := service(t, c, "postgresql")
	tmp := service(t, c, "temporal")
	env := tmp.Environment
	want := map[string]string{
		"DB": "postgres12", "DB_PORT": "5432", "POSTGRES_SEEDS": "postgresql",
		"POSTGRES_USER": pg.Environment["POSTGRES_USER"], "POSTGRES_PWD": pg.Environment["POSTGRES_PASSWORD"],
		"BIND_ON_IP": "0.0.0.0",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("temporal %s = %q, want %q", k, env[k], v)
		}
	}
	dc := env["DYNAMIC_CONFIG_FILE_PATH"]
	if dc == "" {
		t.Fatal("temporal has no DYNAMIC_CONFIG_FILE_PATH (the server refuses to start without the file)")
	}
	// The image's working directory is /etc/temporal.
	host := c.HostPath(tmp, filepath.Join("/etc/temporal", dc))
	b, err := os.ReadFile(host)
	if err != nil {
		t.Fatalf("dynamic config %s is not mounted from the repository: %v", dc, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil || len(m) == 0 {
		t.Errorf("dynamic config %s: %v", host, err)
	}

	lines := service(t, c, "temporal-admin-tools").CommandLines()
	for _, db := range []string{"temporal", "temporal_visibility"} {
		kind := strings.TrimPrefix(db, "temporal_") // temporal, visibility
		for _, step := range []string{"create", "setup-schema -v 0.0", "update-schema --schema-name postgresql/v12/" + kind} {
			if !hasLine(lines, "--db "+db+" "+step) {
				t.Errorf("schema job does not run %q for %s:\n%s", step, db, strings.Join(lines, "\n"))
			}
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "temporal-sql-tool") && !strings.Contains(l, "--plugin postgres12 --ep postgresql -p 5432 -u "+pg.Environment["POSTGRES_USER"]+" ") {
			t.Errorf("schema job line does not reach the compose PostgreSQL: %s", l)
		}
	}
	if got := service(t, c, "temporal-admin-tools").Environment["SQL_PASSWORD"]; got != pg.Environment["POSTGRES_PASSWORD"] {
		t.Errorf("schema job SQL_PASSWORD %q, want the postgresql password", got)
	}
	ns := service(t, c, "temporal-create-namespace")
	if ns.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" || !strings.Contains(strings.Join(ns.CommandLines(), " "),
		"namespace create --namespace "+service(t, c, "worker").Environment["TEMPORAL_NAMESPACE"]) {
		t.Errorf("namespace job does not create the worker's namespace: %+v", ns)
	}
}

// The worker is built from this repository, scales (no fixed name or
// port, sessions in PostgreSQL rather than a shared volume), reaches
// Temporal and its session database, and needs a model provider.
func TestCompose_WorkerScalesWithSessionsInPostgres(t *testing.T) {
	c := load(t)
	pg := service(t, c, "postgresql")
	w := service(t, c, "worker")
	if w.Build == nil {
		t.Error("worker is not built from this repository")
	}
	if w.ContainerName != "" || len(w.Ports) != 0 {
		t.Errorf("worker has a container name %q or ports %v: it cannot scale", w.ContainerName, w.Ports)
	}
	if w.Restart == "" {
		t.Error("worker has no restart policy (it exits when Temporal is not reachable yet)")
	}
	env := w.Environment
	if env["TEMPORAL_ADDRESS"] != "temporal:7233" || env["TEMPORAL_NAMESPACE"] == "" {
		t.Errorf("worker Temporal wiring: %v", env)
	}
	if env["DURABLE_AGENT_SESSION_STORE"] != settings.SessionStorePostgres {
		t.Errorf("worker session store %q, want postgres", env["DURABLE_AGENT_SESSION_STORE"])
	}
	u, err := url.Parse(env["DURABLE_AGENT_SESSION_POSTGRESURL"])
	if err != nil || u.Hostname() != "postgresql" || u.User.Username() != pg.Environment["POSTGRES_USER"] {
		t.Fatalf("worker session database %q, want the postgresql service as %s", env["DURABLE_AGENT_SESSION_POSTGRESURL"], pg.Environment["POSTGRES_USER"])
	}
	if _, hasPw := u.User.Password(); hasPw || env["PGPASSWORD"] != pg.Environment["POSTGRES_PASSWORD"] {
		t.Errorf("worker password: keep it out of the URL (shown in settings) and in PGPASSWORD (%q)", env["PGPASSWORD"])
	}
	db := strings.TrimPrefix(u.Path, "/")
	if !hasLine(service(t, c, "temporal-admin-tools").CommandLines(), "--db "+db+" create") {
		t.Errorf("no job creates the session database %q", db)
	}
	if p := env["DURABLE_AGENT_MODEL_PROVIDER"]; !strings.HasPrefix(p, "${DURABLE_AGENT_MODEL_PROVIDER:?") {
		t.Errorf("worker model provider %q: it must be required (the worker refuses to guess)", p)
	}
	// A named volume or a bind mount would be one filesystem for every
	// replica of a scaled worker (auth store and workspaces of all); the
	// image's anonymous volumes are per container.
	for _, v := range w.Volumes {
		t.Errorf("worker mounts %q: shared by every replica (each has its own /data and /workspace from the image)", v)
	}

	st := service(t, c, "starter")
	if st.Build == nil || !slices.Contains(st.Profiles, "cli") || len(st.Entrypoint) == 0 || st.Entrypoint[0] != "/usr/local/bin/starter" {
		t.Errorf("starter: %+v", st)
	}
	// The starter names the worker's provider, never a silent default
	// (a real worker refuses prompts naming the scripted fake).
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "DURABLE_AGENT_SESSION_STORE", "DURABLE_AGENT_SESSION_POSTGRESURL", "PGPASSWORD",
		"DURABLE_AGENT_MODEL_PROVIDER"} {
		if st.Environment[k] != env[k] {
			t.Errorf("starter %s = %q, worker %q", k, st.Environment[k], env[k])
		}
	}
}

// Every DURABLE_AGENT_ variable the compose file sets is a setting:
// settings.Load rejects unknown ones, and a worker in a restart loop is
// no way to learn of a typo.
func TestCompose_VariablesAreSettings(t *testing.T) {
	c := load(t)
	known := map[string]bool{settings.EnvHome: true, settings.EnvConfig: true, settings.EnvCodecKey: true}
	for _, k := range settings.Keys() {
		known[k.Env] = true
	}
	for name, s := range c.Services {
		for k := range s.Environment {
			if strings.HasPrefix(k, settings.EnvPrefix) && !known[k] {
				t.Errorf("service %s sets %s, which is no setting", name, k)
			}
		}
	}
}

// The image builds the cluster worker and the starter from main packages
// of this module that compile (the compile is skipped with -short), runs
// the worker, and gives each container its own /data and /workspace, the
// starter's working directory.
func TestDockerfile_BuildsClusterWorker(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	if !strings.HasPrefix(strings.TrimSpace(df[strings.Index(df, "FROM "):]), "FROM golang:1.26.8") {
		t.Errorf("build stage is not golang:1.26.8 (go.mod's toolchain)")
	}
	builds := dockerBuilds(df)
	if builds["/out/worker"] != "./cmd/worker-cluster" || builds["/out/starter"] != "./starter" {
		t.Fatalf("Dockerfile builds %v, want /out/worker from ./cmd/worker-cluster and /out/starter from ./starter", builds)
	}
	final := df[strings.LastIndex(df, "\nFROM "):]
	for _, want := range []string{"COPY --from=build /out/worker /out/starter /usr/local/bin/", `ENTRYPOINT ["/usr/local/bin/worker"]`,
		"ca-certificates", "WORKDIR /workspace", `VOLUME ["/data", "/workspace"]`, "ENV DURABLE_AGENT_HOME=/data", "USER agent"} {
		if !strings.Contains(final, want) {
			t.Errorf("final stage lacks %q", want)
		}
	}
	if !strings.Contains(final, "mkdir -p /data /workspace && chown agent /data /workspace") {
		t.Error("final stage does not create /data and /workspace for the agent user")
	}
	c := load(t)
	if home := service(t, c, "worker").Environment["DURABLE_AGENT_HOME"]; home != "/data" {
		t.Errorf("compose worker DURABLE_AGENT_HOME %q, want the image's /data volume", home)
	}

	pkgs := make([]string, 0, len(builds))
	for _, pkg := range builds {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	list := exec.Command("go", append([]string{"list", "-e", "-f", "{{.ImportPath}} {{.Name}} {{.Error}} {{.DepsErrors}}"}, pkgs...)...)
	list.Dir = RepoRoot()
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", pkgs, err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] != "main" || !strings.HasSuffix(line, " <nil> []") {
			t.Errorf("Dockerfile build target: %s (want a main package without errors)", line)
		}
	}
	if testing.Short() {
		return
	}
	// Compile (no link: several packages) what the image builds.
	build := exec.Command("go", append([]string{"build"}, pkgs...)...)
	build.Dir = RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("go build %v: %v\n%s", pkgs, err, out)
	}
}

// dockerBuilds maps each `go build -o OUT PKG` of the Dockerfile's RUN
// lines to its package.
func dockerBuilds(df string) map[string]string {
	builds := map[string]string{}
	for _, line := range strings.Split(df, "\n") {
		if !strings.HasPrefix(line, "RUN ") {
			continue
		}
		for _, cmd := range strings.Split(strings.TrimPrefix(line, "RUN "), "&&") {
			f := strings.Fields(cmd)
			i := slices.Index(f, "go")
			if i < 0 || i+1 >= len(f) || f[i+1] != "build" {
				continue
			}
			out := ""
			for j := i + 2; j+1 < len(f); j++ {
				if f[j] == "-o" {
					out = f[j+1]
				}
			}
			builds[out] = f[len(f)-1]
		}
	}
	return builds
}

// goModVersion is the version go.mod requires of module path.
func goModVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", path)
	return ""
}

func hasLine(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}
