package cluster

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeClusterBlock is the README's "Beyond one machine" sh block as
// written, and its first line (the export of the directory and ports).
func readmeClusterBlock(t *testing.T) (block, first string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## Beyond one machine\n")
	if i < 0 {
		t.Fatal(`README has no "## Beyond one machine" section`)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatal("the README's Beyond one machine section has no sh block")
	}
	block = s[start+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	first, _, _ = strings.Cut(block, "\n")
	return block, first
}

// readmeClusterSteps returns the commands of the first sh block in the
// README's "Beyond one machine" section, continuation lines joined and
// comments dropped.
func readmeClusterSteps(t *testing.T) []string {
	t.Helper()
	block, _ := readmeClusterBlock(t)
	var cmds []string
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if c := strings.Index(line, " #"); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\")
			continue
		}
		if line = cur + line; line != "" {
			cmds = append(cmds, line)
		}
		cur = ""
	}
	return cmds
}

// assignments are the NAME=VALUE words of a command (quotes dropped).
func assignments(cmd string) map[string]string {
	out := map[string]string{}
	for _, w := range strings.Fields(cmd) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" || strings.ToUpper(k) != k || strings.ContainsAny(k, `"'$/-`) {
			continue
		}
		out[k] = strings.Trim(v, `'"`)
	}
	return out
}

// The README's steps without Docker are the compose file's, with the
// compose host names replaced by this machine's: the schema job's
// temporal-sql-tool lines, the temporal service's variables for the
// server's main, and the worker's connection and session store. So the
// README says what test/cluster (which runs the compose file's values)
// does.
func TestREADME_ClusterStepsAreTheComposeFiles(t *testing.T) {
	c := load(t)
	cmds := readmeClusterSteps(t)
	find := func(prefix string) []string {
		var out []string
		for _, cmd := range cmds {
			if strings.HasPrefix(cmd, prefix) {
				out = append(out, cmd)
			}
		}
		return out
	}

	// Schema: the job's lines, one for one, through $sql.
	job := service(t, c, "temporal-admin-tools")
	const composeTool = "temporal-sql-tool --plugin postgres12 --ep postgresql -p 5432 -u temporal "
	var want []string
	for _, l := range job.CommandLines() {
		if rest, ok := strings.CutPrefix(l, composeTool); ok {
			want = append(want, "$sql "+rest)
		} else if strings.HasPrefix(l, "temporal-sql-tool") {
			t.Fatalf("schema job line %q does not start %q", l, composeTool)
		}
	}
	if got := find("$sql "); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("README schema lines:\n%s\nwant the compose job's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	flags := strings.TrimSpace(strings.TrimPrefix(composeTool, "temporal-sql-tool"))
	flags = strings.NewReplacer("--ep postgresql", "--ep 127.0.0.1", "-p 5432", "-p $PGPORT").Replace(flags)
	if got := find(`sql=`); len(got) != 1 || got[0] != `sql="$bin/sql `+flags+`"` {
		t.Errorf("README defines the SQL tool as %q, want the compose job's flags with --ep 127.0.0.1: %s", got, flags)
	}
	if got := assignments(strings.Join(find("export SQL_PASSWORD="), " "))["SQL_PASSWORD"]; got != job.Environment["SQL_PASSWORD"] {
		t.Errorf("README SQL_PASSWORD %q, want the job's %q", got, job.Environment["SQL_PASSWORD"])
	}

	// The server: the temporal service's variables, hosts replaced.
	var server string
	for _, cmd := range cmds {
		if strings.Contains(cmd, `"$bin/server" start`) {
			server = cmd
		}
	}
	if server == "" {
		t.Fatal(`README does not start "$bin/server" start`)
	}
	got := assignments(server)
	local := map[string]string{"POSTGRES_SEEDS": "127.0.0.1", "BIND_ON_IP": "127.0.0.1", "DB_PORT": "$PGPORT"}
	for k, v := range service(t, c, "temporal").Environment {
		if l, ok := local[k]; ok {
			v = l
		}
		if got[k] != v {
			t.Errorf("README server %s=%q, want %q (compose temporal service)", k, got[k], v)
		}
		delete(got, k)
	}
	for k := range got {
		t.Errorf("README server sets %s, which the compose temporal service does not", k)
	}

	// Workers: the compose worker's connection and sessions, hosts
	// replaced.
	exports := map[string]string{}
	for _, cmd := range find("export ") {
		for k, v := range assignments(cmd) {
			exports[k] = v
		}
	}
	w := service(t, c, "worker").Environment
	u, err := url.Parse(w["DURABLE_AGENT_SESSION_POSTGRESURL"])
	if err != nil {
		t.Fatal(err)
	}
	sessionsURL := strings.Replace(u.String(), "@"+u.Host+"/", "@127.0.0.1:$PGPORT/", 1)
	for k, v := range map[string]string{
		"TEMPORAL_ADDRESS":                  strings.Replace(w["TEMPORAL_ADDRESS"], "temporal:7233", "127.0.0.1:$FRONTEND_GRPC_PORT", 1),
		"TEMPORAL_NAMESPACE":                w["TEMPORAL_NAMESPACE"],
		"PGPASSWORD":                        w["PGPASSWORD"],
		"DURABLE_AGENT_SESSION_STORE":       w["DURABLE_AGENT_SESSION_STORE"],
		"DURABLE_AGENT_SESSION_POSTGRESURL": sessionsURL,
	} {
		if exports[k] != v {
			t.Errorf("README exports %s=%q, want %q (compose worker)", k, exports[k], v)
		}
	}
	if exports["DURABLE_AGENT_MODEL_PROVIDER"] == "" {
		t.Error("README workers name no model provider (they refuse to start without one)")
	}
	if n := len(find(`DURABLE_AGENT_HOME=`)); n < 3 {
		t.Errorf("README starts %d processes with their own DURABLE_AGENT_HOME, want two workers and the starter", n)
	}
}
