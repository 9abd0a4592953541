// Package settings is the product's one settings schema, read from three
// sources with one precedence: command-line flags > environment variables >
// the YAML settings file > defaults (SPEC section 8).
//
// Every key has the same dotted name everywhere: `retry.maxRetries` is the
// YAML path retry: {maxRetries: ...}, the flag --retry.maxRetries and the
// environment variable DURABLE_AGENT_RETRY_MAXRETRIES (prefix, dots become
// underscores, upper case). The standard TEMPORAL_ADDRESS and
// TEMPORAL_NAMESPACE variables are honoured too; the DURABLE_AGENT_ ones win.
//
// Contract:
//   - Load rejects invalid input at start with an *Error whose message is
//     one line naming the key, the value and where it came from (file and
//     line, environment variable, or flag). Values are parsed strictly from
//     their text, so "abc" for a number is an error, never 0, and unknown keys
//     in the file or unknown DURABLE_AGENT_ variables are errors, with a
//     "did you mean" suggestion. Values of unknown keys are never echoed (a
//     misplaced secret must not reach a log).
//   - One key table (keys.go) states each key once: name, type (its
//     field's), default (Defaults), limits, scope and doc. viper reads and
//     layers the sources (defaults, file, environment, flags); the table
//     parses each key's winning text once, and its origin is the layer that
//     set it. viper never converts text here: its conversions silently
//     coerce bad input.
//   - SetBool is the only writer of the settings file; it changes one key
//     (retry.enabled, compaction.enabled) and keeps every other key, value and (where the YAML
//     library can) comment, and replaces the file atomically.
//   - Settings hold no secrets: model.credential is a credential id.
package settings
