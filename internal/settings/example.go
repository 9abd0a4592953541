package settings

import (
	"strconv"
	"strings"
)

// ExampleYAML renders a settings file with every key at its default, each
// under a comment saying what it does and its environment variable. Loading
// it gives Defaults(). dataDir is shown commented out: the file lives in the
// data dir, so moving it belongs to --data-dir or DURABLE_AGENT_DATADIR.
func ExampleYAML() string {
	d := Defaults()
	var b strings.Builder
	b.WriteString("# durable-agent settings.\n")
	b.WriteString("# Precedence: flags > environment > this file > defaults. Every key is shown\n")
	b.WriteString("# with its default; delete the ones you do not change. Each key has a flag of\n")
	b.WriteString("# the same dotted name (--retry.maxRetries) and an environment variable\n")
	b.WriteString("# (DURABLE_AGENT_RETRY_MAXRETRIES); lists there are \";\"-separated.\n")
	group := ""
	for i := range schema {
		k := &schema[i]
		g, name, nested := strings.Cut(k.key, ".")
		indent := ""
		if nested {
			indent = "  "
			if g != group {
				b.WriteString("\n" + g + ":\n")
				group = g
			}
		} else {
			name = k.key
			b.WriteString("\n")
		}
		b.WriteString(indent + "# " + k.desc + " Env: " + k.env() + ".\n")
		if k.defText != "" { // a default that depends on the machine
			b.WriteString(indent + "# " + name + ": " + k.defText + "\n")
			continue
		}
		b.WriteString(indent + name + ": " + yamlValue(k, &d) + "\n")
	}
	return b.String()
}

// yamlValue renders the key's field in d as a YAML value.
func yamlValue(k *keyDef, d *Settings) string {
	switch x := k.get(d).(type) {
	case string:
		return strconv.Quote(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return k.text(d)
}
