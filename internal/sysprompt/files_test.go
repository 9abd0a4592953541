package sysprompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/tools"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func TestProjectFiles(t *testing.T) {
	fsys := tools.Local.FS()
	cases := []struct {
		name  string
		setup func(t *testing.T, top string) (workspace string)
		want  []string // paths relative to top, in order
		check func(t *testing.T, files []File)
	}{
		{name: "repository root down to the workspace, outermost first, nothing above the root",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/AGENTS.md", "above the repository")
				write(t, top+"/repo/.git/HEAD", "ref: main")
				write(t, top+"/repo/AGENTS.md", "root rules")
				write(t, top+"/repo/CLAUDE.md", "root claude rules")
				write(t, top+"/repo/a/CLAUDE.md", "a rules")
				write(t, top+"/repo/a/b/AGENTS.md", "b rules")
				return top + "/repo/a/b"
			},
			want: []string{"repo/AGENTS.md", "repo/CLAUDE.md", "repo/a/CLAUDE.md", "repo/a/b/AGENTS.md"},
			check: func(t *testing.T, files []File) {
				if files[0].Text != "root rules" || files[3].Text != "b rules" {
					t.Errorf("texts: %+v", files)
				}
			}},
		{name: "a .git file (a worktree) marks the root too",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/AGENTS.md", "above")
				write(t, top+"/wt/.git", "gitdir: /elsewhere")
				write(t, top+"/wt/AGENTS.md", "wt rules")
				return top + "/wt/sub"
			},
			want: []string{"wt/AGENTS.md"}},
		{name: "no repository: the workspace alone",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/AGENTS.md", "parent")
				write(t, top+"/ws/AGENTS.md", "ws rules")
				return top + "/ws"
			},
			want: []string{"ws/AGENTS.md"}},
		{name: "CLAUDE.md linked to AGENTS.md is said once",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/ws/.git/HEAD", "")
				write(t, top+"/ws/AGENTS.md", "same rules")
				if err := os.Symlink("AGENTS.md", top+"/ws/CLAUDE.md"); err != nil {
					t.Fatal(err)
				}
				return top + "/ws"
			},
			want: []string{"ws/AGENTS.md"}},
		{name: "a huge file is cut at MaxFileBytes and says how much was left out",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/ws/.git/HEAD", "")
				write(t, top+"/ws/AGENTS.md", strings.Repeat("é", MaxFileBytes)) // 2 bytes each
				return top + "/ws"
			},
			want: []string{"ws/AGENTS.md"},
			check: func(t *testing.T, files []File) {
				f := files[0]
				if len(f.Text) != MaxFileBytes || f.Omitted != MaxFileBytes {
					t.Errorf("kept %d bytes, omitted %d; want %d and %d", len(f.Text), f.Omitted, MaxFileBytes, MaxFileBytes)
				}
				text, _ := Build(Facts{Files: files})
				if !strings.Contains(text, "[32768 more bytes of this file are left out") {
					t.Errorf("no cut notice in the text")
				}
			}},
		{name: "all files together stay within MaxProjectBytes",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/r/.git/HEAD", "")
				write(t, top+"/r/AGENTS.md", strings.Repeat("a", MaxFileBytes))
				write(t, top+"/r/CLAUDE.md", strings.Repeat("b", MaxFileBytes))
				write(t, top+"/r/w/AGENTS.md", "inner rules")
				return top + "/r/w"
			},
			want: []string{"r/AGENTS.md", "r/CLAUDE.md", "r/w/AGENTS.md"},
			check: func(t *testing.T, files []File) {
				if files[2].Text != "" || files[2].Omitted != int64(len("inner rules")) {
					t.Errorf("the file past the budget: %+v", files[2])
				}
			}},
		{name: "a directory named AGENTS.md is said to be unreadable",
			setup: func(t *testing.T, top string) string {
				write(t, top+"/ws/AGENTS.md/x", "")
				return top + "/ws"
			},
			want: []string{"ws/AGENTS.md"},
			check: func(t *testing.T, files []File) {
				if !strings.HasPrefix(files[0].Problem, "could not be read: ") {
					t.Errorf("problem = %q", files[0].Problem)
				}
			}},
		{name: "no workspace: no files",
			setup: func(t *testing.T, top string) string { return "" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			ws := c.setup(t, top)
			files := ProjectFiles(fsys, ws)
			var want []string
			for _, w := range c.want {
				want = append(want, filepath.Join(top, w))
			}
			if strings.Join(paths(files), "|") != strings.Join(want, "|") {
				t.Fatalf("files = %q, want %q", paths(files), want)
			}
			if c.check != nil {
				c.check(t, files)
			}
		})
	}
}

// Secrets in the worker's environment never reach the system prompt:
// Build reads nothing but its facts.
func TestBuildCarriesNoEnvironmentSecret(t *testing.T) {
	const secret = "sk-ant-sysprompt-test-0123456789"
	t.Setenv("ANTHROPIC_API_KEY", secret)
	t.Setenv("DURABLE_AGENT_CODEC_KEY", secret)
	ws := t.TempDir()
	write(t, ws+"/AGENTS.md", "rules")
	text, _ := Build(Facts{Workspace: ws, OS: "linux/amd64", Shell: "bash", Date: friday,
		Tools: tools.All(), Files: ProjectFiles(tools.Local.FS(), ws)})
	if strings.Contains(text, secret) {
		t.Fatalf("the system prompt carries an environment secret")
	}
}
