package readme

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// block is one fenced block of the README.
type block struct {
	line int    // 1-based line of the opening fence
	lang string // "sh", "bash", "json", "" ...
	text string // the lines between the fences
	dir  directives
}

// directives are the readme-test comments before a block (see the
// package doc).
type directives struct {
	background string   // until TEXT
	expect     []string // each must appear in the output
	exit       int
	needs      string
	skip       string
	output     bool
}

// runnable reports whether the block is a shell command block.
func (b block) runnable() bool { return b.lang == "sh" || b.lang == "bash" }

func (b block) String() string {
	first, _, _ := strings.Cut(b.text, "\n")
	return fmt.Sprintf("README.md:%d (%s)", b.line, first)
}

var (
	reDirective = regexp.MustCompile(`^<!--\s*readme-test:\s*(.*?)\s*-->$`)
	reQuoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// repoRoot is the module root (this package is test/readme).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// readmeBlocks reads README.md's fenced blocks with their directives.
func readmeBlocks(t *testing.T, root string) []block {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(string(data))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return blocks
}

// parseBlocks splits markdown into its fenced blocks. Directives apply
// to the next fence when only blank lines stand between them.
func parseBlocks(md string) ([]block, error) {
	var (
		blocks  []block
		pending []string
		cur     *block
		body    []string
	)
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if trimmed == "```" {
				cur.text = strings.Join(body, "\n")
				blocks = append(blocks, *cur)
				cur, body = nil, nil
				continue
			}
			body = append(body, line)
			continue
		}
		switch m := reDirective.FindStringSubmatch(trimmed); {
		case m != nil:
			pending = append(pending, m[1])
		case strings.HasPrefix(trimmed, "```"):
			b := block{line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
			for _, d := range pending {
				if err := b.dir.parse(d); err != nil {
					return nil, fmt.Errorf("line %d: readme-test %q: %w", i+1, d, err)
				}
			}
			if b.dir.output && b.runnable() {
				return nil, fmt.Errorf("line %d: readme-test output is for a plain block (the output), not a command block", i+1)
			}
			if d := b.dir; !b.runnable() && (d.background != "" || d.expect != nil || d.exit != 0 || d.needs != "" || d.skip != "") {
				return nil, fmt.Errorf("line %d: only output applies to a %q block", i+1, b.lang)
			}
			pending, cur = nil, &b
		case trimmed != "":
			if len(pending) > 0 {
				return nil, fmt.Errorf("line %d: readme-test %q is not followed by a fenced block", i+1, pending[0])
			}
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: unclosed fence", cur.line)
	}
	return blocks, nil
}

func (d *directives) parse(s string) error {
	verb, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	switch verb {
	case "background":
		args, err := quoted(strings.TrimPrefix(rest, "until "))
		if err != nil || len(args) != 1 || !strings.HasPrefix(rest, "until ") {
			return fmt.Errorf(`want background until "TEXT"`)
		}
		d.background = args[0]
	case "expect":
		args, err := quoted(rest)
		if err != nil || len(args) == 0 {
			return fmt.Errorf(`want expect "TEXT"...`)
		}
		d.expect = append(d.expect, args...)
	case "exit":
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || n > 255 {
			return fmt.Errorf("want exit N")
		}
		d.exit = n
	case "needs":
		if rest == "" || strings.ContainsAny(rest, " /") {
			return fmt.Errorf("want needs PROGRAM")
		}
		d.needs = rest
	case "skip":
		if rest == "" {
			return fmt.Errorf("a skip names its reason")
		}
		d.skip = rest
	case "output":
		if rest != "" {
			return fmt.Errorf("output takes no argument")
		}
		d.output = true
	default:
		return fmt.Errorf("unknown directive %q", verb)
	}
	return nil
}

// quoted reads a list of Go-quoted strings separated by spaces.
func quoted(s string) ([]string, error) {
	var out []string
	for _, q := range reQuoted.FindAllString(s, -1) {
		v, err := strconv.Unquote(q)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if strings.TrimSpace(reQuoted.ReplaceAllString(s, "")) != "" {
		return nil, fmt.Errorf("unquoted text in %q", s)
	}
	return out, nil
}

// outputPattern turns a line of a README output block into a whole-line
// pattern: "…" matches anything, a run of digits any number.
func outputPattern(line string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i, part := range strings.Split(strings.TrimSpace(line), "…") {
		if i > 0 {
			b.WriteString(".*")
		}
		b.WriteString(regexp.MustCompile(`[0-9]+`).ReplaceAllString(regexp.QuoteMeta(part), `[0-9]+`))
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// matchOutput checks that the non-blank lines of want appear in got in
// order, each as a whole line; it returns the first line that does not.
func matchOutput(want, got string) (missing string, ok bool) {
	lines := strings.Split(got, "\n")
	at := 0
	for _, w := range strings.Split(want, "\n") {
		if strings.TrimSpace(w) == "" {
			continue
		}
		re := outputPattern(w)
		found := false
		for ; at < len(lines); at++ {
			if re.MatchString(strings.TrimSpace(lines[at])) {
				found, at = true, at+1
				break
			}
		}
		if !found {
			return w, false
		}
	}
	return "", true
}

// ciTestCommands are the `go test` command lines of .ci/run.
func ciTestCommands(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "go test ") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatal(".ci/run runs no go test")
	}
	return out
}

// checkTestCommand fails unless cmd (a README `go test` command, its
// comment cut) is one of .ci/run's.
func checkTestCommand(t *testing.T, root, cmd string) {
	t.Helper()
	ci := ciTestCommands(t, root)
	for _, c := range ci {
		if c == cmd {
			return
		}
	}
	t.Errorf("README test command %q is not what .ci/run runs (%q)", cmd, ci)
}

// readmeTestCommands are the `go test` lines of the README's command
// blocks, comments cut.
func readmeTestCommands(blocks []block) []string {
	var out []string
	for _, b := range blocks {
		if !b.runnable() {
			continue
		}
		for _, line := range strings.Split(b.text, "\n") {
			cmd, _, _ := strings.Cut(line, "#")
			if cmd = strings.Join(strings.Fields(cmd), " "); strings.HasPrefix(cmd, "go test ") {
				out = append(out, cmd)
			}
		}
	}
	return out
}

// The README's directives parse, the ones that skip are few and say why,
// and its test command is the one CI runs.
func TestREADME_Directives(t *testing.T) {
	root := repoRoot(t)
	blocks := readmeBlocks(t, root)
	run, skipped := 0, 0
	for _, b := range blocks {
		switch {
		case !b.runnable():
		case b.dir.skip != "":
			skipped++
			t.Logf("skipped: %s: %s", b, b.dir.skip)
		default:
			run++
		}
	}
	if run < 4 || skipped > 2 {
		t.Fatalf("%d command blocks run, %d skipped: skips must stay rare", run, skipped)
	}
	cmds := readmeTestCommands(blocks)
	if len(cmds) == 0 {
		t.Fatal("the README shows no go test command")
	}
	for _, c := range cmds {
		checkTestCommand(t, root, c)
	}
}

// The parser and the output matcher themselves.
func TestParseBlocksAndMatchOutput(t *testing.T) {
	md := "text\n<!-- readme-test: background until \"ready\" -->\n\n```sh\nrun me\n```\n" +
		"<!-- readme-test: expect \"a \\\"b\\\"\" \"c\" -->\n```bash\nx\ny\n```\n" +
		"<!-- readme-test: output -->\n```\nout 123 …\n```\n"
	blocks, err := parseBlocks(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].dir.background != "ready" || blocks[0].text != "run me" ||
		strings.Join(blocks[1].dir.expect, "|") != `a "b"|c` || blocks[1].text != "x\ny" || !blocks[2].dir.output {
		t.Fatalf("blocks = %+v", blocks)
	}
	for _, bad := range []string{
		"<!-- readme-test: sikp x -->\n```sh\na\n```\n",
		"<!-- readme-test: skip -->\n```sh\na\n```\n",
		"<!-- readme-test: skip x -->\nprose\n```sh\na\n```\n",
		"<!-- readme-test: output -->\n```sh\na\n```\n",
		"<!-- readme-test: expect unquoted -->\n```sh\na\n```\n",
		"```sh\na\n",
	} {
		if _, err := parseBlocks(bad); err == nil {
			t.Errorf("parseBlocks(%q) accepted it", bad)
		}
	}
	got := "noise\nworkspace: /tmp/demo-42\n  ✓ read: #!/bin/sh …\nmore\nurl http://127.0.0.1:18233/x/abc-1/history\n"
	if m, ok := matchOutput("workspace: /tmp/demo-1\n\n✓ read: #!/bin/sh …\nurl http://127.0.0.1:8233/x/abc-9/…/history", got); ok {
		t.Fatalf("matched a line that is not there: %v", m)
	}
	if m, ok := matchOutput("workspace: /tmp/demo-1\n\n✓ read: #!/bin/sh …\nurl http://127.0.0.1:8233/x/…/history", got); !ok {
		t.Fatalf("line %q not matched", m)
	}
	if _, ok := matchOutput("more\nworkspace: /tmp/demo-1", got); ok {
		t.Fatal("lines out of order matched")
	}
}
