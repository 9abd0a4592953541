package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// asideDir is the directory of the data kept beside a session:
// <dir>/<sessionID>.aside (Delete removes it).
func (s *Store) asideDir(sessionID string) string {
	return filepath.Join(s.dir, sessionID+".aside")
}

// PutAside keeps data under key beside the session, outside its entries
// (a prompt's state that is not conversation, such as the scripted
// model's fault script); a second Put of a key replaces the first. Delete
// removes it with the session. key follows the rules of a session id.
func (s *Store) PutAside(sessionID, key string, data []byte) error {
	if err := errors.Join(ValidateID(sessionID), ValidateID(key)); err != nil {
		return fmt.Errorf("put aside: %w", err)
	}
	// A write cut short (a killed worker) is repeated whole by the
	// caller's retry, so no temporary file is needed.
	dir := s.asideDir(sessionID)
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, key), data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("put aside %s of session %q: %w", key, sessionID, err)
	}
	return nil
}

// Aside returns the data PutAside kept under key (nil when none).
func (s *Store) Aside(sessionID, key string) ([]byte, error) {
	if err := errors.Join(ValidateID(sessionID), ValidateID(key)); err != nil {
		return nil, fmt.Errorf("read aside: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(s.asideDir(sessionID), key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read aside %s of session %q: %w", key, sessionID, err)
	}
	return b, nil
}
