package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gofrs/flock"
)

// Delete removes a session: its file, what was kept beside it
// (PutAside) and the store's cache of it. A
// session that does not exist is not an error, so a Delete repeated after
// a crash finishes the job. Delete takes the file's exclusive lock first,
// so it waits for an Append of another process in progress; it does not
// stop a later one from creating the session anew (the caller makes sure
// nothing runs in the session: the workers' DeleteSession workflow runs
// under the session's workflow id). A directory or other non-regular file
// in the session file's place is refused (ErrPermanent).
func (s *Store) Delete(sessionID string) error {
	if err := ValidateID(sessionID); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	c := s.cacheFor(sessionID)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer s.forget(sessionID, c)
	c.reset()

	path := s.Path(sessionID)
	if err := statRegular(path); err != nil {
		return fmt.Errorf("delete session %q: %w", sessionID, err)
	}
	if err := os.RemoveAll(s.asideDir(sessionID)); err != nil {
		return fmt.Errorf("delete session %q: %w", sessionID, err)
	}
	lock := flock.New(path, flock.SetFlag(os.O_RDONLY))
	err := lock.Lock()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete session %q: %w", sessionID, err)
	}
	defer lock.Close()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete session %q: %w", sessionID, err)
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("delete session %q: %w", sessionID, err)
	}
	return nil
}
