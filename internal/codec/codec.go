package codec

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/internal/settings"
)

// Metadata of an encrypted payload.
const (
	// MetadataEncoding is the SDK's standard metadata key for a payload's
	// encoding.
	MetadataEncoding = converter.MetadataEncoding
	// EncodingEncrypted marks a payload this codec sealed.
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID names the key that sealed the payload.
	MetadataKeyID = "encryption-key-id"
)

// ErrUnknownKey: an encrypted payload names a key id this codec lacks.
var ErrUnknownKey = errors.New("unknown codec key id")

// ErrWrongKey: an encrypted payload does not open with the key of its id
// (a different key under the same id, or tampered data).
var ErrWrongKey = errors.New("payload does not decrypt: wrong key or tampered data")

// Codec is an AES-256-GCM converter.PayloadCodec. It encrypts with one key
// and decrypts with any key it holds, by the id in the payload's metadata.
// It is safe for concurrent use.
type Codec struct {
	encrypt Key
	keys    map[string]Key
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec that encrypts with encrypt and decrypts payloads of
// encrypt and of the older keys (for key rotation).
func New(encrypt Key, older ...Key) *Codec {
	c := &Codec{encrypt: encrypt, keys: map[string]Key{}}
	for _, k := range older {
		c.keys[k.id] = k
	}
	c.keys[encrypt.id] = encrypt
	return c
}

// FromSettings returns the codec of the settings' key (see LoadKey, with
// the process environment), or nil when no key is configured.
func FromSettings(s settings.Settings) (*Codec, error) {
	k, err := LoadKey(s.Codec, os.LookupEnv)
	if err != nil || k == nil {
		return nil, err
	}
	return New(*k), nil
}

// KeyID is the id of the key Encode uses.
func (c *Codec) KeyID() string { return c.encrypt.id }

// Encode seals every payload with the encryption key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode payload %d: %w", i, err)
		}
		k := c.encrypt
		nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encode payload %d: nonce: %w", i, err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:    []byte(k.id),
			},
			Data: k.aead.Seal(nonce, nonce, plain, []byte(k.id)),
		}
	}
	return out, nil
}

// Decode opens encrypted payloads and passes others through unchanged.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		k, ok := c.keys[id]
		if !ok {
			return nil, fmt.Errorf("decode payload %d: %w %q (this codec has %s)", i, ErrUnknownKey, id, c.ids())
		}
		ns := k.aead.NonceSize()
		if len(p.GetData()) < ns+k.aead.Overhead() {
			return nil, fmt.Errorf("decode payload %d with key id %q: %w (only %d bytes)", i, id, ErrWrongKey, len(p.GetData()))
		}
		nonce, sealed := p.GetData()[:ns], p.GetData()[ns:]
		plain, err := k.aead.Open(nil, nonce, sealed, []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decode payload %d with key id %q: %w", i, id, ErrWrongKey)
		}
		orig := &commonpb.Payload{}
		if err := proto.Unmarshal(plain, orig); err != nil {
			return nil, fmt.Errorf("decode payload %d with key id %q: inner payload: %w", i, id, err)
		}
		out[i] = orig
	}
	return out, nil
}

func (c *Codec) ids() string {
	ids := make([]string, 0, len(c.keys))
	for id := range c.keys {
		ids = append(ids, fmt.Sprintf("%q", id))
	}
	sort.Strings(ids)
	return "key ids " + strings.Join(ids, ", ")
}

// DataConverter is the SDK's default data converter with every payload it
// makes encrypted by c and every payload it reads decrypted. A nil c (no
// key configured, see FromSettings) gives nil: the SDK's default.
func (c *Codec) DataConverter() converter.DataConverter {
	if c == nil {
		return nil
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}
