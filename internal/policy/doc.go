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
//	prefix:TEXT   the bash command starts with TEXT (leading spaces ignored)
//	regex:RE      the bash command matches the Go regular expression RE
//	path:GLOB     the call's path argument matches GLOB (doublestar: ** spans
//	              directories); a relative GLOB matches paths inside the
//	              workspace, relative to it; an absolute one the absolute path
//
// Contract:
//   - an allow rule with prefix: never matches a command holding a shell
//     control character (; & | ` $( < > or a newline), so "allow bash
//     prefix:git status" does not allow "git status; rm -rf ~";
//   - an allow rule with a MATCH never matches an argument that was cut
//     to fit history (Call.Cut); ask and deny rules match its kept start;
//   - a call no rule matches is allowed (an empty policy allows all,
//     the behaviour before policies): Default ends with "ask *";
//   - Compile puts tools.requireApproval (and the worker's floor) first as
//     "ask TOOL" rules, so they win over any allow rule;
//   - every bad rule is reported in one line naming the rule and the
//     problem.
//
// A Grant is a person's "allow for this session" of an asked call: later
// calls of the same tool that the same ask rule matches (for bash, with
// the same first word) are allowed without asking.
package policy
