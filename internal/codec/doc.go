// Package codec encrypts workflow payloads at rest in Temporal with
// AES-256-GCM, and serves the same codec over HTTP so the Temporal Web UI
// (or `temporal --codec-endpoint`) can show them to whoever holds the key.
//
// Contract:
//   - Codec implements go.temporal.io/sdk/converter.PayloadCodec. Encode
//     turns every payload into one whose metadata is
//     {"encoding": "binary/encrypted", "encryption-key-id": <id>} and whose
//     data is a fresh 12-byte nonce followed by the AES-GCM sealing of the
//     original payload (metadata included), with the key id as additional
//     data. The Temporal server and anyone reading its database see only
//     the key id and the ciphertext's length.
//   - Decode opens encrypted payloads with the key their metadata names and
//     passes any other payload through unchanged, so histories written
//     before a key was configured still read. A payload for a key id this
//     codec lacks fails with ErrUnknownKey; one that does not open (another
//     key under the same id, or tampered data) fails with ErrWrongKey.
//   - Key material is never printed: not by Key's String method, not in
//     any error, not in the HTTP handler's answers.
//   - The key comes from settings (codec.keyFile, a file of 32 raw bytes or
//     their base64) or from $DURABLE_AGENT_CODEC_KEY (base64); naming both
//     is an error. Encryption is on whenever a key is configured
//     (FromSettings returns nil otherwise).
//   - The codec server (Serve) listens on a loopback address only: it
//     decrypts whatever it is sent, so it is the key holder's consent to
//     show payloads in a browser on this machine. Its CORS rules admit the
//     Web UI's origins only.
package codec
