package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/renameio/v2"
	"go.yaml.in/yaml/v3"
)

// SetBool persists a boolean key ("retry.enabled" for set-auto-retry,
// SPEC 8; "compaction.enabled" for set_auto_compaction) in the settings
// file. It creates the file (mode 0600, its directory 0700) when missing,
// keeps every other key, value and, as far as the YAML library allows,
// comment, and replaces the file atomically (temporary file in the same
// directory, then rename), so a crash never leaves half a file. It
// refuses to touch a file that is not valid YAML.
func SetBool(file, name string, v bool) error {
	group, key, _ := strings.Cut(name, ".")
	return persist(file, group, key, func(n *yaml.Node) {
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!bool", strconv.FormatBool(v), 0
		n.Alias, n.Anchor, n.Content = nil, "", nil
	})
}

// persist sets group.key in the settings file with put, which changes
// the key's node (a new, empty one when the file has none).
func persist(file, group, key string, put func(*yaml.Node)) error {
	name := group + "." + key
	if target, err := filepath.EvalSymlinks(file); err == nil {
		file = target // rename must replace the real file, not the link
	}
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("settings: set %s in %s: %w", name, file, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("settings: set %s in %s: bad YAML: %w", name, file, err)
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode}
	}
	if len(doc.Content) == 0 {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		*root = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: root.HeadComment}
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("settings: set %s in %s: the top level is not a mapping", name, file)
	}
	if err := setNode(root, group, key, put); err != nil {
		return fmt.Errorf("settings: set %s in %s: %w", name, file, err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	err = enc.Encode(&doc)
	if err == nil {
		err = enc.Close()
	}
	if err != nil {
		return fmt.Errorf("settings: set %s in %s: encode: %w", name, file, err)
	}
	// Replaced atomically (a temporary file in the same directory, then
	// rename), keeping the file's mode; a new file is 0600.
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("settings: write %s: %w", file, err)
	}
	if err := renameio.WriteFile(file, buf.Bytes(), 0o600, renameio.WithTempDir(dir), renameio.IgnoreUmask()); err != nil {
		return fmt.Errorf("settings: write %s: %w", file, err)
	}
	return nil
}

// setNode sets group.key in a mapping with put: a flat "group.key" entry
// if the file uses one, else the key inside the group (created when
// missing).
func setNode(root *yaml.Node, group, key string, put func(*yaml.Node)) error {
	if n := mapValue(root, group+"."+key); n != nil {
		put(n)
		return nil
	}
	g := mapValue(root, group)
	if g == nil {
		g = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: group}, g)
	}
	if g.Kind == yaml.ScalarNode && g.Tag == "!!null" {
		g.Kind, g.Tag, g.Value = yaml.MappingNode, "!!map", ""
	}
	if g.Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a mapping", group)
	}
	if n := mapValue(g, key); n != nil {
		put(n)
		return nil
	}
	n := &yaml.Node{}
	put(n)
	g.Content = append(g.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, n)
	return nil
}

// mapValue returns the value node of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
