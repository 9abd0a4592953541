package activities

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/internal/session"
)

// credentialsError fails a call whose credential cannot be read: running
// it without one would turn a broken auth store into a misleading
// "unauthorized". The store's error becomes a one-line message (key-shaped
// text masked); it is not kept as the cause, so nothing else of it
// reaches Temporal.
func credentialsError(provider string, err error) error {
	msg := strings.Join(strings.Fields(fmt.Sprintf("select credential for provider %s: %v", provider, err)), " ")
	return temporal.NewNonRetryableApplicationError(Redact(msg), ErrTypeCredentials, nil)
}

// storeError makes permanent file-system failures, and session files the
// store refuses for good (session.ErrPermanent: a bad header, a newer
// format, a directory in the file's place), non-retryable so the prompt
// fails with a clear message instead of retrying forever.
func storeError(op string, err error) error {
	msg := fmt.Sprintf("%s: %v", op, err)
	if errors.Is(err, session.ErrPermanent) ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		errors.Is(err, syscall.EFBIG) {
		return temporal.NewNonRetryableApplicationError(msg, ErrTypeSessionStore, err)
	}
	return temporal.NewApplicationErrorWithCause(msg, ErrTypeSessionStore, err)
}

// load loads a session after checking its id (badInput); a store error,
// session.ErrNotFound included, is a storeError.
func (a *Activities) load(sessionID string) (*session.Session, error) {
	if err := session.ValidateID(sessionID); err != nil {
		return nil, badInput(err)
	}
	sess, err := a.Sessions.Load(sessionID)
	if err != nil {
		return nil, storeError("load session", err)
	}
	return sess, nil
}

// badInput is the non-retryable failure of an invalid activity input.
func badInput(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
}
