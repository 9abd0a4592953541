package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// SetAutoCompaction persists compaction.enabled in the settings file (RPC
// set_auto_compaction) the way SetAutoRetry persists retry.enabled: the
// file is created (0600) when missing, every other key, value and comment
// is kept, the file is replaced atomically, and a file that is not valid
// YAML is refused.
func SetAutoCompaction(file string, enabled bool) error {
	return persistBool(file, "compaction", "enabled", enabled)
}

// persistBool sets group.key to v in the settings file.
func persistBool(file, group, key string, v bool) error {
	name := group + "." + key
	if target, err := filepath.EvalSymlinks(file); err == nil {
		file = target // rename must replace the real file, not the link
	}
	mode := fs.FileMode(0o600)
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		if fi, err := os.Stat(file); err == nil {
			mode = fi.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	default:
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
	if err := setBool(root, group, key, v); err != nil {
		return fmt.Errorf("settings: set %s in %s: %w", name, file, err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("settings: set %s in %s: encode: %w", name, file, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("settings: set %s in %s: encode: %w", name, file, err)
	}
	return writeAtomic(file, buf.Bytes(), mode)
}
