package settings

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/durableagent/durableagent/internal/line"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// maxFileSize bounds the settings file: a few kilobytes of YAML in
// practice. With checkFile it guards the path viper reads: ReadInConfig
// reads any path whole, so /dev/zero would fill memory, a FIFO without a
// writer would block for ever, and a mistyped path to a disk image would
// be read. Only a regular file of at most maxFileSize bytes is handed to it.
const maxFileSize = 1 << 20

func readError(path string, err error) error {
	var reason error = err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err // the path is in the message already
	}
	return &Error{Key: "file", msg: line.Fold(fmt.Sprintf("settings: read settings file %s: %v", path, reason)), err: err}
}

// notRegular names the kinds of file checkFile refuses, a character
// device before ModeDevice, which it also sets.
var notRegular = []struct {
	mode fs.FileMode
	what string
}{
	{fs.ModeDir, "a directory"}, {fs.ModeNamedPipe, "a named pipe (FIFO)"}, {fs.ModeSocket, "a socket"},
	{fs.ModeCharDevice, "a character device"}, {fs.ModeDevice, "a block device"},
}

// checkFile refuses what viper must not read (see maxFileSize).
func checkFile(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		if fi.Size() > maxFileSize {
			return &Error{Key: "file", msg: line.Fold(fmt.Sprintf("settings: settings file %s is larger than %d bytes (1 MiB), too large for a settings file", path, maxFileSize))}
		}
		return nil
	}
	what := "not a regular file (" + m.Type().String() + ")"
	for _, k := range notRegular {
		if m&k.mode != 0 {
			what = k.what + ", not a regular file"
			break
		}
	}
	return &Error{Key: "file", msg: line.Fold(fmt.Sprintf("settings: settings file %s is %s", path, what))}
}

// fileCodec is the YAML decoder viper reads the settings file with. It
// checks the file's shape against the key table (unknown keys with a
// suggestion, duplicates, groups) and keeps each key's value as written,
// with its line, in a rawValue: viper's own YAML decoding turns
// `name: 1.0` into 1 and drops the lines that origins and errors name.
// Values are parsed once, after viper has layered them (loadWithOrigins).
type fileCodec struct {
	path  string
	lines map[string]int
}

// Decoder makes fileCodec viper's decoder registry: the config type is
// always yaml.
func (c *fileCodec) Decoder(string) (viper.Decoder, error) { return c, nil }

// Decode fills out with the file's keys, nested by group as written.
func (c *fileCodec) Decode(data []byte, out map[string]any) error {
	c.lines = map[string]int{}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3 says "yaml: line 3: ..."; name the file too.
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		return &Error{Key: "file",
			msg: line.Fold(fmt.Sprintf("settings: bad YAML in %s: %s", c.path, msg)), err: err}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file or comments only
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &Error{Key: "file",
			msg: fmt.Sprintf("settings: %s:%d: the top level must be a mapping of keys (e.g. retry: {maxRetries: 3})", c.path, root.Line)}
	}
	return c.walk("", root, out)
}

// resolve follows YAML aliases (*anchor) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// walk records the keys of a mapping under prefix. Nested groups and flat
// dotted keys ("retry.maxRetries: 3") both work: a key's name is its path.
func (c *fileCodec) walk(prefix string, m *yaml.Node, out map[string]any) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := m.Content[i], resolve(m.Content[i+1])
		where := fmt.Sprintf("%s:%d", c.path, kn.Line)
		if kn.Kind != yaml.ScalarNode {
			return &Error{Key: prefix,
				msg: fmt.Sprintf("settings: keys must be plain names, found a %s (from %s)", nodeKind(kn), where)}
		}
		name := prefix + kn.Value
		if k := lookupKey(name); k != nil {
			if first, dup := c.lines[name]; dup {
				return &Error{Key: name,
					msg: fmt.Sprintf("settings: duplicate key %q in %s (first at line %d)", name, where, first)}
			}
			raw, p := nodeRaw(k, vn)
			if p != nil {
				return p.err(where)
			}
			raw.where = where
			out[kn.Value] = raw
			c.lines[name] = kn.Line
			continue
		}
		if !isGroup(name) {
			msg := fmt.Sprintf("settings: unknown key %q in %s", name, where)
			if s := Suggest(name, allNames()); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			return &Error{Key: name, msg: line.Fold(msg)}
		}
		switch {
		case vn.Kind == yaml.MappingNode:
			group, _ := out[kn.Value].(map[string]any)
			if group == nil {
				group = map[string]any{}
				out[kn.Value] = group
			}
			if err := c.walk(name+".", vn, group); err != nil {
				return err
			}
		case vn.Kind == yaml.ScalarNode && vn.Tag == "!!null":
			// "retry:" with nothing under it: no keys set.
		default:
			return (&problem{key: name, value: vn.Value,
				reason: "must be a group of " + name + ".* keys, found a " + nodeKind(vn), quiet: vn.Kind != yaml.ScalarNode}).err(where)
		}
	}
	return nil
}

// nodeRaw takes a key's value node as written. Scalars keep their text
// (so `name: 1.0` stays "1.0"); a YAML null is "" and an empty list.
func nodeRaw(k *keyDef, n *yaml.Node) (rawValue, *problem) {
	isNull := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	if k.kind() == kindList {
		if isNull {
			return rawValue{seq: true}, nil
		}
		if n.Kind != yaml.SequenceNode {
			return rawValue{}, &problem{key: k.key, value: n.Value,
				reason: "must be a list of strings (e.g. [\"503 Service Unavailable\", ok]), found a " + nodeKind(n), quiet: n.Kind != yaml.ScalarNode}
		}
		r := rawValue{seq: true}
		for i, it := range n.Content {
			if it = resolve(it); it.Kind != yaml.ScalarNode {
				return rawValue{}, &problem{key: fmt.Sprintf("%s[%d]", k.key, i),
					reason: "must be a string, found a " + nodeKind(it), quiet: true}
			}
			if it.Tag == "!!null" {
				r.items = append(r.items, "")
			} else {
				r.items = append(r.items, it.Value)
			}
		}
		return r, nil
	}
	if n.Kind == yaml.MappingNode && k.key == "mcp.servers" {
		// A mapping the key reads as JSON, as the environment gives it.
		var v any
		if err := n.Decode(&v); err != nil {
			return rawValue{}, &problem{key: k.key, reason: err.Error(), quiet: true}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return rawValue{}, &problem{key: k.key, reason: err.Error(), quiet: true}
		}
		return rawValue{text: string(b)}, nil
	}
	if n.Kind != yaml.ScalarNode {
		return rawValue{}, &problem{key: k.key, reason: "must be " + k.kindPhrase() + ", found a " + nodeKind(n), quiet: true}
	}
	if isNull {
		return rawValue{}, nil
	}
	return rawValue{text: n.Value}, nil
}

func nodeKind(n *yaml.Node) string {
	return cmp.Or(map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list", yaml.ScalarNode: "scalar"}[n.Kind], "node")
}

// allNames lists every key and group, the candidates for suggestions.
func allNames() []string {
	var out []string
	seen := map[string]bool{}
	for i := range schema {
		k := schema[i].key
		parts := strings.Split(k, ".")
		for j := 1; j < len(parts); j++ {
			if g := strings.Join(parts[:j], "."); !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
		out = append(out, k)
	}
	return out
}
