package codec

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"

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

// Codec is an AES-256-GCM converter.PayloadCodec with one key: it
// encrypts with it and decrypts the payloads whose metadata names its id.
// It is safe for concurrent use.
type Codec struct{ key Key }

// New returns the codec of key.
func New(key Key) *Codec { return &Codec{key: key} }

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
func (c *Codec) KeyID() string { return c.key.id }

// Encode seals every payload with the encryption key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode payload %d: %w", i, err)
		}
		k := c.key
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
		id, k := string(p.GetMetadata()[MetadataKeyID]), c.key
		if id != k.id {
			return nil, fmt.Errorf("decode payload %d: %w %q (this codec has key id %q)", i, ErrUnknownKey, id, k.id)
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

// DataConverter is the SDK's default data converter with every payload it
// makes encrypted by c and every payload it reads decrypted. A nil c (no
// key configured, see FromSettings) gives nil: the SDK's default.
func (c *Codec) DataConverter() converter.DataConverter {
	if c == nil {
		return nil
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}
