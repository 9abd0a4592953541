// Package policy decides, for each tool call, whether it runs (allow),
// waits for a person (ask) or does not run (deny). It is pure: no
// Temporal, no clock, no files; the workflow feeds it the call and acts
// on the decision. docs/spec.md 15.3 is the rule language and how a bash
// command and a path are matched.
//
// A policy is a list of rules, "ACTION TOOL [prefix:WORDS|regex:RE|path:GLOB]",
// first match wins. A bash command is parsed as bash reads it (shell.go).
// An allow rule with a match is narrow: it matches only a plain command. An
// ask or deny rule with a match is wide: it matches when any simple command
// matches, and it matches every command that cannot be parsed or was cut.
// PathRules hands the tool host the rules it applies to real locations and
// walked files (paths.go).
//
// Contract:
//   - a call no rule matches is allowed (an empty policy allows all):
//     Default ends with "ask *";
//   - Compile puts tools.requireApproval (and the worker's floor) first as
//     "ask TOOL" rules, so they win over any allow rule;
//   - every bad rule is reported in one line naming the rule and the
//     problem;
//   - a Grant ("allow for this session") allows later calls of the same
//     tool that the same ask rule matches (for bash, the same program); a
//     command that runs other programs is granted as that exact command
//     only, and one that is not one plain command gets no grant.
package policy
