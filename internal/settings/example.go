package settings

import (
	"strconv"
	"strings"
)

// ExampleYAML renders a settings file that shows every key commented out
// at its default, under a comment saying what it does and its environment
// variable. It sets nothing: loading it gives Defaults() with every origin
// "default", so `starter settings` says where each value really comes
// from and a worker reading the file has no setting to warn about (issue
// 39). A user uncomments the keys they change.
func ExampleYAML() string {
	d := Defaults()
	var b strings.Builder
	b.WriteString("# durable-agent settings.\n")
	b.WriteString("# Precedence: flags > environment > this file > defaults. Every key is shown\n")
	b.WriteString("# commented out at its default; uncomment the ones you change. Each key has a\n")
	b.WriteString("# flag of the same dotted name (--retry.maxRetries) and an environment variable\n")
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
		value := k.defText // a default that depends on the machine
		if value == "" {
			value = yamlValue(k, &d)
		}
		b.WriteString(indent + "# " + k.desc + " Env: " + k.env() + ".\n")
		b.WriteString(indent + "# " + name + ": " + value + "\n")
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
