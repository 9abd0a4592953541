// Package policy decides, for each tool call, whether it runs (allow),
// waits for a person (ask) or does not run (deny). It is pure: no
// Temporal, no clock, no files; the workflow feeds it the call and acts
// on the decision.
//
// A policy is a list of rules, first match wins. A rule is one line of
// text (the form tools.policy takes in settings, and the text a decision
// shows as its reason):
//
//	ACTION TOOL [MATCH]
//
// ACTION is allow, ask or deny; TOOL a tool name or * (any tool); MATCH,
// optional, one of
//
//	prefix:WORDS  the bash command runs a command that starts with WORDS
//	regex:RE      the bash command matches the Go regular expression RE
//	path:GLOB     the call's path argument matches GLOB (doublestar: ** spans
//	              directories); a relative GLOB matches paths inside the
//	              workspace, relative to it; an absolute one the absolute path
//
// A bash command is parsed as bash reads it (shell.go) into simple
// commands. An allow rule with a match is narrow: it matches only a plain
// command (one simple command of known words: no ; & | newline,
// redirection, assignment or $ expansion), prefix: word by word, regex:
// against its words joined by spaces. An ask or deny rule with a match is
// wide: it matches when any simple command matches (wrappers such as env
// or sudo looked through, git's global options skipped, short options
// compared as a set, the scripts of bash -c, eval and trap read), regex:
// also against the command as written; and it matches every command that
// cannot be parsed or was cut to fit history. A path: rule sees the
// path argument as written (a read rule's path applies to grep too);
// PathRules hands the tool host the rules it applies where the file
// system is: to the real location of the path (symbolic links resolved)
// and to each file a grep, find or ls walk reaches (paths.go).
//
// Contract:
//   - a call no rule matches is allowed (an empty policy allows all,
//     the behaviour before policies): Default ends with "ask *";
//   - Compile puts tools.requireApproval (and the worker's floor) first as
//     "ask TOOL" rules, so they win over any allow rule;
//   - every bad rule is reported in one line naming the rule and the
//     problem.
//
// A Grant is a person's "allow for this session" of an asked call: later
// calls of the same tool that the same ask rule matches (for bash, with
// the same program) are allowed without asking. A command that runs other
// programs (a shell, an interpreter given code, env, xargs, find -exec …)
// is granted as that exact command only; one that is not one plain
// command (chained, redirected) gets no grant.
package policy
