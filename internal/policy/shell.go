package policy

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A bash command is matched the way bash reads it: parsed by
// mvdan.cc/sh/v3/syntax into simple commands, each an argv after quote
// removal, escapes and brace expansion. Every simple command counts:
// those chained by ; && || |, in subshells, functions, command
// substitutions, here-documents a shell reads, the scripts of
// bash/sh -c, eval and trap, and the command after a wrapper (env,
// sudo, timeout, xargs, …). A script that cannot be parsed, was cut, or
// nests too deep is opaque: every ask and deny rule with a match matches it.

// dyn starts a word that is known only when the command runs ($x, $(…)):
// it matches any word of an ask or deny rule and none of an allow rule.
const dyn = "\x00"

// maxNesting bounds nested scripts (bash -c inside eval inside …),
// maxParses the scripts parsed for one command and maxCmds the simple
// commands (wrapper suffixes included) kept of it; past them it is opaque.
const (
	maxNesting = 8
	maxParses  = 64
	maxCmds    = 4096
)

// wrappers run the command their arguments name.
var wrappers = set("env", "command", "exec", "builtin", "nice", "timeout", "nohup", "sudo", "doas", "su",
	"xargs", "time", "watch", "stdbuf", "ionice", "setsid", "chrt", "taskset", "flock", "chroot",
	"unshare", "nsenter", "runuser", "setpriv", "strace", "ltrace", "script", "parallel", "busybox")

// shells run a script: with -c its argument, else a file or stdin.
var shells = set("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh")

// interpreters run code given with a flag (-c, -e, -r, …) or a file.
var interpreters = set("python", "node", "nodejs", "perl", "ruby", "php", "lua", "luajit", "deno", "bun",
	"Rscript", "awk", "gawk", "mawk", "nawk", "tclsh", "pwsh", "osascript", "irb", "jshell", "groovy")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// script is what the policy sees of a bash command.
type script struct {
	src string
	// cmds are the argv of every simple command the script may run.
	cmds [][]string
	// plain is the argv when the script is one simple command of known
	// words, without redirection or assignment (nil otherwise): the only
	// kind an allow rule with a match or a program grant covers.
	plain  []string
	opaque bool
	parses int
}

func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// parseScript reads a bash command; cut says it is only its start.
func parseScript(src string, cut bool) *script {
	s := &script{src: src, opaque: cut}
	f, err := parseShell(src)
	if err != nil || cut {
		s.opaque = true
		return s
	}
	s.walk(f, 0)
	if len(f.Stmts) == 1 && len(s.cmds) > 0 {
		st := f.Stmts[0]
		call, ok := st.Cmd.(*syntax.CallExpr)
		if ok && len(call.Assigns) == 0 && len(st.Redirs) == 0 && !st.Background && !st.Coprocess && !st.Negated &&
			!strings.Contains(strings.Join(s.cmds[0], " "), dyn) {
			s.plain = s.cmds[0]
		}
	}
	return s
}

// walk adds the simple commands of n.
func (s *script) walk(n syntax.Node, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			// A shell reading a here-document or here-string runs it.
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 && shells[path.Base(wordText(call.Args[0]))] {
				for _, r := range n.Redirs {
					if w := r.Hdoc; w != nil || r.Op == syntax.WordHdoc {
						if w == nil {
							w = r.Word
						}
						body := dyn
						if known(w) {
							b, err := expand.Document(nil, w) //workflowcheck:ignore deterministic on known words
							if err == nil {
								body = b
							}
						}
						s.nested(body, depth, true)
					}
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				s.command(wordsOf(n.Args), depth)
			}
		}
		return true
	})
}

// wordsOf is the argv of words: quotes removed, escapes and braces
// expanded; a word with an expansion is dyn and its source.
func wordsOf(words []*syntax.Word) []string {
	var out []string
	for _, w := range words {
		if !known(w) {
			out = append(out, dyn+wordText(w))
			continue
		}
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
			// No tilde expansion (~user would read the user database).
			parts := append([]syntax.WordPart{&syntax.Lit{Value: `\` + lit.Value}}, w.Parts[1:]...)
			w = &syntax.Word{Parts: parts}
		}
		// Known words only: no parameter, command or file expansion runs.
		fields, err := expand.Fields(nil, w) //workflowcheck:ignore deterministic on known words
		if err != nil {
			out = append(out, dyn+wordText(w))
			continue
		}
		out = append(out, fields...)
	}
	return out
}

// known says w holds no expansion: its words are known before it runs.
func known(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// wordText is a word as written.
func wordText(w *syntax.Word) string {
	var b bytes.Buffer
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// command adds one simple command and what it runs in turn.
func (s *script) command(args []string, depth int) {
	if len(s.cmds) >= maxCmds {
		s.opaque = true
		return
	}
	s.cmds = append(s.cmds, args)
	prog := path.Base(args[0])
	switch {
	case wrappers[prog]:
		if prog == "xargs" { // its command's last words come from stdin
			args = append(args[:len(args):len(args)], dyn+"(stdin)")
		}
		for i := 1; i < len(args); i++ {
			if wrappers[path.Base(args[i])] { // its own suffixes follow here
				s.cmds = append(s.cmds, args[i:])
			} else {
				s.command(args[i:], depth+1)
			}
			if strings.ContainsAny(args[i], " \t\n;&|") { // env -S, watch, su -c
				s.nested(args[i], depth, false)
			}
		}
	case shells[prog]:
		for i, a := range args {
			if i > 0 && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
				for _, b := range args[i+1:] {
					if !strings.HasPrefix(b, "-") {
						s.nested(b, depth, true)
					}
				}
				break
			}
		}
	case prog == "eval":
		s.nested(strings.Join(args[1:], " "), depth, true)
	case prog == "trap" && len(args) > 1:
		s.nested(args[1], depth, true)
	case prog == "find":
		for i, a := range args {
			if i+1 < len(args) && (strings.HasPrefix(a, "-exec") || strings.HasPrefix(a, "-ok")) {
				s.command(args[i+1:], depth+1)
			}
		}
	}
}

// nested adds the commands of a script run by a command; strict makes
// one that cannot be parsed (or is not known) opaque, else it is let be
// (a word that may or may not be a script).
func (s *script) nested(src string, depth int, strict bool) {
	if strings.Contains(src, dyn) || depth >= maxNesting || s.parses >= maxParses {
		s.opaque = s.opaque || strict || depth >= maxNesting || s.parses >= maxParses
		return
	}
	s.parses++
	f, err := parseShell(src)
	if err != nil {
		s.opaque = s.opaque || strict
		return
	}
	s.walk(f, depth+1)
}

// runsOthers names why a command's approval cannot be granted for the
// session as its program: it runs other programs ("" when it does not).
func runsOthers(args []string) string {
	prog := path.Base(args[0])
	switch {
	case shells[prog]:
		return prog + " is a shell"
	case wrappers[prog], prog == "eval", prog == "trap", prog == "source", prog == ".":
		return prog + " runs other commands"
	case interpreters[strings.TrimRight(prog, "0123456789.")]:
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				return prog + " " + a + " runs code it is given"
			}
		}
	case prog == "find":
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-exec") || strings.HasPrefix(a, "-ok") {
				return "find " + a + " runs other commands"
			}
		}
	case prog == "git":
		for _, a := range args[1:] {
			if a == "-c" || strings.HasPrefix(a, "--config-env") || strings.HasPrefix(a, "--exec-path") {
				return "git " + a + " can run other commands"
			}
			if !strings.HasPrefix(a, "-") {
				break
			}
		}
	}
	return ""
}

// gitValued are git's global options that take the next word.
var gitValued = set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--attr-source", "--super-prefix")

// gitArgs drops git's global options (-C dir, -c k=v, --git-dir …) so the
// subcommand follows "git"; with an alias defined by -c (or a -c value
// not known) the subcommand could be any.
func gitArgs(c []string) []string {
	alias := false
	for i := 1; i < len(c); i++ {
		switch a := c[i]; {
		case gitValued[a]:
			if i+1 < len(c) && a == "-c" {
				v := strings.ToLower(c[i+1])
				alias = alias || strings.HasPrefix(v, "alias.") || strings.HasPrefix(v, dyn)
			}
			i++
		case strings.HasPrefix(a, "-"):
		default:
			out := append([]string{c[0]}, c[i:]...)
			if alias {
				out[1] = dyn + "alias"
			}
			return out
		}
	}
	return c[:1]
}

// matchPrefix reports whether the rule's words p match: for allow
// (narrow) the plain command starts with them; for ask and deny any
// simple command does, options compared as a set (see prefixOf).
func (s *script) matchPrefix(p []string, exact, narrow bool) bool {
	if narrow {
		return s.plain != nil && wordsStart(p, s.plain, exact)
	}
	if s.opaque {
		return true
	}
	for _, c := range s.cmds {
		if prefixOf(p, c, exact) {
			return true
		}
	}
	return false
}

// wordsStart: c's words start with p's, the last of p a prefix of its
// word unless exact.
func wordsStart(p, c []string, exact bool) bool {
	if len(c) < len(p) {
		return false
	}
	for i, w := range p {
		if i == len(p)-1 && !exact {
			if !strings.HasPrefix(c[i], w) {
				return false
			}
		} else if c[i] != w {
			return false
		}
	}
	return true
}

// prefixOf is the ask and deny reading of a prefix: c's program (its base
// name) is p's first word, git's global options skipped; each short
// option of p (-rf: r and f, case folded) is among c's, wherever they
// stand and however grouped; p's other words are c's first operands, the
// last one a prefix of its word unless exact. A word known only at run
// time matches any.
func prefixOf(p, c []string, exact bool) bool {
	word := func(w, cw string, last bool) bool {
		return strings.HasPrefix(cw, dyn) || cw == w || (last && !exact && strings.HasPrefix(cw, w))
	}
	if !word(p[0], c[0], len(p) == 1) && !word(p[0], path.Base(c[0]), len(p) == 1) {
		return false
	}
	if path.Base(c[0]) == "git" {
		c = gitArgs(c)
	}
	pf, po := options(p[1:])
	cf, co := options(c[1:])
	for _, f := range pf {
		if !slices.Contains(cf, f) && !slices.Contains(cf, dyn) {
			return false
		}
	}
	if len(po) > len(co) {
		return false
	}
	lastOperand := len(p) > 1 && !strings.HasPrefix(p[len(p)-1], "-")
	for i, w := range po {
		if !word(w, co[i], lastOperand && i == len(po)-1) {
			return false
		}
	}
	return true
}

// options splits words into their options (short ones letter by letter,
// lower case; long ones without =value; dyn for a word known only at run
// time) and their operands.
func options(words []string) (flags, operands []string) {
	for i, w := range words {
		switch {
		case w == "--":
			return flags, append(operands, words[i+1:]...)
		case strings.HasPrefix(w, dyn):
			flags, operands = append(flags, dyn), append(operands, w)
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w, "=")
			flags = append(flags, name)
		case len(w) > 1 && w[0] == '-':
			for _, r := range strings.ToLower(w[1:]) {
				flags = append(flags, "-"+string(r))
			}
		default:
			operands = append(operands, w)
		}
	}
	return flags, operands
}

// matchRegex: for allow, the plain command's words joined by spaces;
// for ask and deny, the command as written or any simple command's
// words so joined.
func (s *script) matchRegex(re *regexp.Regexp, narrow bool) bool {
	if narrow {
		return s.plain != nil && re.MatchString(strings.Join(s.plain, " "))
	}
	if s.opaque || re.MatchString(s.src) {
		return true
	}
	for _, c := range s.cmds {
		if re.MatchString(strings.ReplaceAll(strings.Join(c, " "), dyn, "")) {
			return true
		}
	}
	return false
}
