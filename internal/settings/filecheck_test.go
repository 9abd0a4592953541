package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin runs load and fails the test if it does not return in time
// (a FIFO without a writer would block the open for ever).
func loadWithin(t *testing.T, file string) error {
	t.Helper()
	env := newEnv(t, nil)
	done := make(chan error, 1)
	go func() {
		_, err := load(t, file, env)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%s) hangs", file)
		return nil
	}
}

// checkFileError checks that err is a one-line *Error about the file,
// naming the path and containing want.
func checkFileError(t *testing.T, err error, path, want string) {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || se.Key != "file" {
		t.Fatalf("Load = %v, want a settings file *Error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, want) {
		t.Fatalf("error %q: want one line naming %s and saying %q", msg, path, want)
	}
}

func TestLoad_ConfigDevZeroIsRefusedNotReadToOOM(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	err := loadWithin(t, "/dev/zero")
	checkFileError(t, err, "/dev/zero", "is a character device, not a regular file")
}

func TestLoad_ConfigFIFOWithoutWriterIsRefusedNotAHang(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.yaml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	err := loadWithin(t, path)
	checkFileError(t, err, path, "is a named pipe (FIFO), not a regular file")
}

func TestLoad_ConfigDirectoryIsRefused(t *testing.T) {
	path := t.TempDir()
	err := loadWithin(t, path)
	checkFileError(t, err, path, "is a directory, not a regular file")
}

func TestLoad_DefaultSettingsFileThatIsAFIFOIsRefused(t *testing.T) {
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, FileName)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	env := newEnv(t, nil)
	done := make(chan error, 1)
	go func() {
		_, err := load(t, "", env, "--data-dir", dataDir)
		done <- err
	}()
	select {
	case err := <-done:
		checkFileError(t, err, path, "named pipe")
	case <-time.After(10 * time.Second):
		t.Fatal("Load hangs on a FIFO as the default settings file")
	}
}

func TestLoad_ConfigLargerThan1MiBIsRefused(t *testing.T) {
	dir := t.TempDir()
	// Exactly the limit is fine: a comment padded with spaces.
	atLimit := filepath.Join(dir, "ok.yaml")
	content := "retry:\n  maxRetries: 4\n#" + strings.Repeat(" ", maxFileSize-len("retry:\n  maxRetries: 4\n#")-1) + "\n"
	if err := os.WriteFile(atLimit, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := load(t, atLimit, newEnv(t, nil))
	if err != nil || s.Retry.MaxRetries != 4 {
		t.Fatalf("a file of exactly 1 MiB: %v (maxRetries %d)", err, s.Retry.MaxRetries)
	}
	// One byte more, sparse so the test writes nothing.
	tooBig := filepath.Join(dir, "big.yaml")
	f, err := os.Create(tooBig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = loadWithin(t, tooBig)
	checkFileError(t, err, tooBig, "larger than 1048576 bytes (1 MiB)")
}

func TestLoad_ConfigMissingStillSaysDoesNotExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := load(t, path, newEnv(t, nil))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Load = %v, want a does-not-exist error", err)
	}
}
