package sysprompt

import (
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

var friday = time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)

func TestBuild(t *testing.T) {
	base := Facts{Workspace: "/src/app", OS: "linux/amd64", Shell: "bash", Date: friday,
		Tools: []string{tools.Read, tools.Bash}}
	cases := []struct {
		name        string
		facts       func(Facts) Facts
		want        []string
		wantNot     []string
		wantSources []string
	}{
		{name: "default preamble, enabled tools and environment",
			facts: func(f Facts) Facts { return f },
			want: []string{"You are a coding agent", "- " + tools.Read + ": " + tools.Summary(tools.Read),
				tools.Guideline(tools.Bash), "Working directory: /src/app", "Operating system: linux/amd64",
				"Shell: bash", "Today's date: Friday, 4 December 2026"},
			wantNot: []string{"- " + tools.Write + ":", tools.Guideline(tools.Edit), "# Project instructions"}},
		{name: "agent.systemPrompt replaces the preamble only",
			facts:   func(f Facts) Facts { f.Replace = "  You are a pirate.\n"; return f },
			want:    []string{"You are a pirate.\n\n# Tools", "Working directory: /src/app", tools.Guideline(tools.Read)},
			wantNot: []string{"You are a coding agent"}, wantSources: []string{SourceReplace}},
		{name: "agent.appendSystemPrompt comes last",
			facts: func(f Facts) Facts {
				f.Append = "Answer in French."
				f.Files = []File{{Path: "/src/app/AGENTS.md", Text: "Use tabs."}}
				return f
			},
			want:        []string{"You are a coding agent", "Use tabs.\n\nAnswer in French.\n"},
			wantSources: []string{"/src/app/AGENTS.md", SourceAppend}},
		{name: "blank additions are ignored",
			facts:   func(f Facts) Facts { f.Replace, f.Append = " \n", "\t"; return f },
			want:    []string{"You are a coding agent"},
			wantNot: []string{"\t"}},
		{name: "no tools: a chat",
			facts:   func(f Facts) Facts { f.Tools, f.Workspace = nil, ""; return f },
			want:    []string{"You have no tools"},
			wantNot: []string{"# Tools", "Working directory"}},
		{name: "unknown tool names are left out",
			facts:   func(f Facts) Facts { f.Tools = []string{"teleport", tools.Ls}; return f },
			want:    []string{"- " + tools.Ls + ": "},
			wantNot: []string{"teleport"}},
		{name: "MCP tools only: they are named, not no tools",
			facts:   func(f Facts) Facts { f.Tools = []string{"mcp__fs__*"}; return f },
			want:    []string{"- mcp__fs__*: a tool (or tools) of an MCP server"},
			wantNot: []string{"You have no tools"}},
		{name: "project files labelled with their paths, outermost first, cuts and problems said",
			facts: func(f Facts) Facts {
				f.Files = []File{
					{Path: "/src/AGENTS.md", Text: "Outer rules.\n"},
					{Path: "/src/app/AGENTS.md", Text: "Inner rules.", Omitted: 1234},
					{Path: "/src/app/CLAUDE.md", Problem: "could not be read: permission denied"},
				}
				return f
			},
			want: []string{"## /src/AGENTS.md\n\nOuter rules.\n\n## /src/app/AGENTS.md\n\nInner rules.\n\n[1234 more bytes",
				"## /src/app/CLAUDE.md\n\n(This file could not be read: permission denied.)"},
			wantSources: []string{"/src/AGENTS.md", "/src/app/AGENTS.md", "/src/app/CLAUDE.md"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.facts(base)
			text, sources := Build(f)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("text has %q:\n%s", w, text)
				}
			}
			if strings.Join(sources, "|") != strings.Join(c.wantSources, "|") {
				t.Errorf("sources = %q, want %q", sources, c.wantSources)
			}
			if again, _ := Build(f); again != text {
				t.Error("the same facts built a different text")
			}
		})
	}
}

// The date said is the date passed in, in its location: the text does
// not depend on when Build runs.
func TestBuildDateIsThePassedDate(t *testing.T) {
	a, _ := Build(Facts{Date: friday})
	b, _ := Build(Facts{Date: friday.Add(24 * time.Hour)})
	if a == b || !strings.Contains(b, "Saturday, 5 December 2026") {
		t.Errorf("dates not told apart:\n%s\n---\n%s", a, b)
	}
}

func TestHash(t *testing.T) {
	// The SHA-256 of "abc" (FIPS 180-2 example): the hash a session
	// records can be checked with sha256sum.
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Hash("abc"); got != abc {
		t.Errorf("Hash(abc) = %s, want %s", got, abc)
	}
}
