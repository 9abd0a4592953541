package codec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"github.com/durableagent/durableagent/internal/settings"
)

// KeySize is the AES-256 key length in bytes.
const KeySize = 32

// ErrBadKey: key material that is not 32 bytes (raw or base64).
var ErrBadKey = errors.New("bad codec key")

// Key is one AES-256-GCM key with its id. It keeps only the cipher, not
// the material, and prints as its id.
type Key struct {
	id   string
	aead cipher.AEAD
}

// NewKey builds a key from 32 bytes of material.
func NewKey(id string, material []byte) (Key, error) {
	if id == "" {
		return Key{}, fmt.Errorf("new codec key: %w: the key id is empty", ErrBadKey)
	}
	if len(material) != KeySize {
		return Key{}, fmt.Errorf("new codec key %q: %w: want %d bytes, got %d", id, ErrBadKey, KeySize, len(material))
	}
	block, err := aes.NewCipher(material)
	if err != nil {
		return Key{}, fmt.Errorf("new codec key %q: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return Key{}, fmt.Errorf("new codec key %q: %w", id, err)
	}
	return Key{id: id, aead: aead}, nil
}

// ParseKey builds a key from text: exactly 32 raw bytes, or their base64
// (standard or URL alphabet, padded or not, surrounding whitespace
// ignored). Errors name the length found, never the text.
func ParseKey(id string, text []byte) (Key, error) {
	if len(text) == KeySize {
		return NewKey(id, text)
	}
	trimmed := bytes.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		material, err := enc.DecodeString(string(trimmed))
		if err == nil && len(material) == KeySize {
			return NewKey(id, material)
		}
	}
	return Key{}, fmt.Errorf("parse codec key %q: %w: want %d raw bytes or their base64, got %d bytes that are neither",
		id, ErrBadKey, KeySize, len(text))
}

// String names the key by id only.
func (k Key) String() string { return "codec key " + k.id }

// LoadKey reads the key the settings configure: from c.KeyFile, or from
// the settings.EnvCodecKey variable found by lookup. It returns nil when
// neither is set. Errors name the file or the variable, never the key.
func LoadKey(c settings.Codec, lookup func(string) (string, bool)) (*Key, error) {
	envText, inEnv := lookup(settings.EnvCodecKey)
	inEnv = inEnv && envText != ""
	switch {
	case c.KeyFile != "" && inEnv:
		return nil, fmt.Errorf("load codec key: both codec.keyFile and %s are set; use one", settings.EnvCodecKey)
	case c.KeyFile == "" && !inEnv:
		return nil, nil
	}
	text, from := []byte(envText), settings.EnvCodecKey
	if c.KeyFile != "" {
		var err error
		if text, err = os.ReadFile(c.KeyFile); err != nil {
			if _, perr := ParseKey(c.KeyID, []byte(c.KeyFile)); perr == nil {
				// The "path" is itself a key: do not print it.
				return nil, fmt.Errorf("load codec key: codec.keyFile holds what looks like a key, not a path; put the key in a file and name that file")
			}
			return nil, fmt.Errorf("load codec key from codec.keyFile: %w", err)
		}
		from = c.KeyFile
	}
	k, err := ParseKey(c.KeyID, text)
	if err != nil {
		return nil, fmt.Errorf("load codec key from %s: %w", from, err)
	}
	return &k, nil
}
