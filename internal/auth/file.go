package auth

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"
)

// FileName is the store's file inside the data directory.
const FileName = "auth.json"

// fileVersion is the format version written into auth.json.
const fileVersion = 1

// ErrInsecureFile is returned for an auth.json that group or others can
// read or write: its secrets may already have leaked, and loading it
// would hide that.
var ErrInsecureFile = errors.New("auth store is accessible by group or others")

// FileOptions configure a File. The zero value reads the process
// environment and the wall clock and has no fallback models.
type FileOptions struct {
	// Env reads environment variables for implicit credentials (nil:
	// os.LookupEnv).
	Env func(string) (string, bool)
	// Now is the clock of blocks (nil: time.Now).
	Now func() time.Time
	// FallbackModels lists, per provider, the models a session moves
	// through when no credential is left (settings retry.fallbackModels).
	FallbackModels map[string][]string
}

// File is the persistent credential store: auth.json in the data
// directory. Every method reads the file under an exclusive lock and
// writes it back (atomically, mode 0600) when something changed.
type File struct {
	Windows // on auth.json (UpdateWindow)
	path    string
	opts    FileOptions
}

// fileData is auth.json.
type fileData struct {
	Version int `json:"version"`
	state
}

// OpenFile returns the store at path (normally <dataDir>/auth.json). A
// missing file is an empty store, created on the first write; an existing
// one must be a regular file of mode 0600 or stricter.
func OpenFile(path string, opts FileOptions) (*File, error) {
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	f := &File{path: path, opts: opts}
	f.Windows.Store = f
	if _, err := f.read(); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is the store's file.
func (f *File) Path() string { return f.path }

// Select returns the session's credential for provider (see state.go for
// the rules); ok is false when the provider has none at all.
func (f *File) Select(provider, sessionID string) (c Credential, ok bool, err error) {
	err = f.update(func(st *state, now time.Time) (bool, error) {
		var changed bool
		c, ok, changed = st.selectCred(provider, sessionID, now, f.opts.Env)
		return changed, nil
	})
	return c, ok, err
}

// MarkUsageLimit blocks the session's current credential for
// retryAfterMs (0: DefaultBlockMs) and reports whether the session moved
// to another unblocked credential of the provider or, with none left, to
// the next of the provider's fallback models (model: the session's).
func (f *File) MarkUsageLimit(provider, model, sessionID string, retryAfterMs int64) (sw Switch, err error) {
	err = f.update(func(st *state, now time.Time) (bool, error) {
		var merr error
		sw, merr = st.markUsageLimit(provider, model, sessionID, retryAfterMs, f.opts.FallbackModels[provider], now, f.opts.Env)
		return merr == nil, merr
	})
	return sw, err
}

// Add stores a credential. The id must be new; the secret is kept as is.
func (f *File) Add(c Credential) error {
	if err := ValidateID(c.ID); err != nil {
		return err
	}
	if c.Provider == "" || c.Secret == "" {
		return fmt.Errorf("add credential %q: provider and secret are required", c.ID)
	}
	c.Kind = cmp.Or(c.Kind, KindAPIKey)
	if c.Kind != KindAPIKey && c.Kind != KindOAuth {
		return fmt.Errorf("add credential %q: kind %q is not %s or %s", c.ID, c.Kind, KindAPIKey, KindOAuth)
	}
	return f.update(func(st *state, now time.Time) (bool, error) {
		if slices.ContainsFunc(st.Credentials, func(old Credential) bool { return old.ID == c.ID }) {
			return false, fmt.Errorf("add credential: id %q already exists (remove it first)", c.ID)
		}
		if c.Added.IsZero() {
			c.Added = now.UTC()
		}
		st.Credentials = append(st.Credentials, c)
		return true, nil
	})
}

// Remove deletes a credential, its block and its session assignments.
func (f *File) Remove(id string) error {
	return f.update(func(st *state, now time.Time) (bool, error) {
		i := slices.IndexFunc(st.Credentials, func(c Credential) bool { return c.ID == id })
		if i < 0 {
			return false, fmt.Errorf("remove credential: no credential %q in %s", id, f.path)
		}
		st.Credentials = slices.Delete(st.Credentials, i, i+1)
		delete(st.Blocks, id)
		return true, nil
	})
}

// List describes every credential, implicit ones included, without
// secrets, with the rate-limit windows of auth.json (WithWindows).
func (f *File) List() ([]Entry, error) { return f.ListWithWindows(nil, time.Time{}) }

// ListWithWindows is List with the rate-limit windows of another store
// (the PostgreSQL windows of a cluster: pgstore.Windows.List) read at now
// on that store's clock, in place of auth.json's, which the workers of
// such a cluster do not use. Nil windows are auth.json's.
func (f *File) ListWithWindows(windows map[string]Window, now time.Time) ([]Entry, error) {
	var out []Entry
	err := f.update(func(st *state, stNow time.Time) (bool, error) {
		if windows == nil {
			windows, now = st.Windows, stNow
		}
		out = WithWindows(st.entries(stNow, f.opts.Env), windows, now)
		return false, nil
	})
	return out, err
}

// Secrets returns every secret the store knows now: the stored
// credentials' and the implicit ones of the environment (EnvVars). It
// reads the file without the lock (writes replace it atomically), so a
// credential added while a worker runs is included at the next call.
// The worker redacts tool output of them.
func (f *File) Secrets() ([]string, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	return d.secrets(f.opts.Env), nil
}

// update runs fn on the stored state under the lock and writes the state
// back when fn reports a change.
func (f *File) update(fn func(st *state, now time.Time) (changed bool, err error)) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("auth store %s: %w", f.path, err)
	}
	// An exclusive flock on auth.json.lock, waiting for it: workers on one
	// machine read-modify-write auth.json one at a time.
	lock := flock.New(f.path+".lock", flock.SetFlag(os.O_RDWR|os.O_CREATE), flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("auth store %s: %w", f.path, err)
	}
	defer lock.Unlock()
	d, err := f.read()
	if err != nil {
		return err
	}
	now := f.opts.Now()
	changed, err := fn(&d.state, now)
	if err != nil || !changed {
		return err
	}
	d.prune(now)
	return f.write(d)
}

// read loads auth.json, refusing a file others can read or write.
func (f *File) read() (fileData, error) {
	var d fileData
	info, err := os.Lstat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		d.init()
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("auth store %s: %w", f.path, err)
	}
	if !info.Mode().IsRegular() {
		return d, fmt.Errorf("auth store %s: not a regular file", f.path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return d, fmt.Errorf("%w: %s has mode %#o; run chmod 600 %s", ErrInsecureFile, f.path, perm, f.path)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return d, fmt.Errorf("auth store %s: %w", f.path, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("auth store %s: not valid JSON: %w", f.path, err)
	}
	if d.Version > fileVersion {
		return d, fmt.Errorf("auth store %s: version %d is newer than this program (%d)", f.path, d.Version, fileVersion)
	}
	d.init()
	return d, nil
}

// write replaces auth.json atomically with a 0600 file.
func (f *File) write(d fileData) error {
	d.Version = fileVersion
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("auth store %s: %w", f.path, err)
	}
	err = renameio.WriteFile(f.path, append(b, '\n'), 0o600, renameio.WithTempDir(filepath.Dir(f.path)), renameio.IgnoreUmask())
	if err != nil {
		return fmt.Errorf("auth store %s: %w", f.path, err)
	}
	return nil
}
