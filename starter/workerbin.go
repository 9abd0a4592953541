package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/durableagent/durableagent/internal/settings"
)

// compileNote is said once, before the long compile, so that a first
// `go run ./starter demo` is not a silent wait (docs/install.md has the
// measurements behind it).
const compileNote = "compiling the embedded Temporal server and UI once (the worker binary): " +
	"about 10 minutes on 2 cores with empty Go caches, a minute or so with warm ones; later runs start at once"

// demoBinary returns the path of a worker binary of this very build: from
// the source tree, cached under the user cache dir (built there first if
// needed), or an installed worker of the same version next to the starter
// or on PATH. Without either it says how to install one.
func demoBinary(ctx context.Context, self build, w io.Writer, tty bool) (string, error) {
	if bin := os.Getenv(settings.EnvWorkerBin); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s names a worker binary that cannot be used: %w", settings.EnvWorkerBin, err)
		}
		return bin, nil
	}
	if goBin, err := exec.LookPath("go"); err == nil && self.root != "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache dir for the worker binary: %w", err)
		}
		// Built workers are kept in os.UserCacheDir()/durable-agent/bin.
		return cachedWorker(ctx, goBin, self, filepath.Join(base, "durable-agent", "bin"), w, tty)
	}
	if bin := installedWorker(self); bin != "" {
		return bin, nil
	}
	return "", errors.New(installHint(self))
}

// installHint is the one-line way out when no worker can be built or found.
func installHint(self build) string {
	v := self.version
	if v == "" || v == "(devel)" || strings.HasSuffix(v, "+dirty") {
		v = "latest"
	}
	mod := cmp.Or(self.modPath, "github.com/durableagent/durableagent")
	return fmt.Sprintf("the demo runs in the worker binary (it links the embedded Temporal server and UI), and this starter has no source tree to build it from and finds no worker of its version next to it or on PATH; install it (about 10 minutes of compiling on 2 cores with empty Go caches) and run starter demo again: go install %s/worker@%s", mod, v)
}

// moduleRoot returns the root of the module modPath that holds file, or
// "" when file is not on disk (a -trimpath build) or is not in that module.
func moduleRoot(file, modPath string) string {
	if !filepath.IsAbs(file) || modPath == "" {
		return ""
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if modfile.ModulePath(b) != modPath {
				return ""
			}
			return dir
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

// sourceKey names a build of the tree at root: a module installed with
// @version is its version and sum; a working tree is the hash of what
// goes into a binary (go.mod, go.sum and the non-test .go files, nested
// modules and testdata left out) and of the toolchain and platform.
func sourceKey(self build) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if self.sum != "" {
		fmt.Fprintln(h, self.version, self.sum)
		return hex.EncodeToString(h.Sum(nil))[:16], nil
	}
	err := filepath.WalkDir(self.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == self.root {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !(name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(self.root, p)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash the sources under %s: %w", self.root, err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// cachedWorker returns dir/worker-KEY, building it first when missing;
// older builds in dir are removed once the new one is in place.
func cachedWorker(ctx context.Context, goBin string, self build, dir string, w io.Writer, tty bool) (string, error) {
	key, err := sourceKey(self)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "worker-"+key)
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the worker cache dir: %w", err)
	}
	fmt.Fprintln(w, compileNote)
	fmt.Fprintf(w, "  go build -o %s %s  (in %s)\n", bin, workerPkg, self.root)
	tmp := bin + fmt.Sprintf(".tmp%d", os.Getpid())
	if err := goBuild(ctx, goBin, self.root, workerPkg, tmp, w, tty); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("move the built worker into the cache: %w", err)
	}
	pruneOthers(dir, filepath.Base(bin))
	return bin, nil
}

// pruneOthers removes the cache's other worker builds (each is some
// 250 MB); a build in progress elsewhere (a .tmp file) is left alone.
func pruneOthers(dir, keep string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		n := de.Name()
		if n != keep && strings.HasPrefix(n, "worker-") && !strings.Contains(n, ".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// goBuild runs `go build -v -o out pkg` in root and shows its progress:
// on a terminal one line rewritten every second (packages compiled,
// modules downloaded, elapsed time), elsewhere a line every 30 s.
func goBuild(ctx context.Context, goBin, root, pkg, out string, w io.Writer, tty bool) error {
	cmd := exec.CommandContext(ctx, goBin, "build", "-v", "-o", out, pkg)
	cmd.Dir = root
	stderr, err := cmd.StderrPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	start := time.Now()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stderr); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var pkgs, downloads int
	var other []string // compiler errors and the like, shown on failure
	status := func() string {
		return fmt.Sprintf("packages compiled: %d, modules downloaded: %d, elapsed: %s", pkgs, downloads, time.Since(start).Round(time.Second))
	}
	every := 30 * time.Second
	if tty {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for l, open := "", true; open; {
		select {
		case l, open = <-lines:
			switch {
			case !open:
			case strings.HasPrefix(l, "go: downloading "):
				downloads++
			case l != "" && !strings.ContainsAny(l, " \t:") && !strings.HasPrefix(l, "#"): // a package's import path
				pkgs++
			case len(other) < 40:
				other = append(other, l)
			}
		case <-tick.C:
			if tty {
				fmt.Fprintf(w, "\r  %s ", status())
			} else {
				fmt.Fprintf(w, "  still compiling: %s\n", status())
			}
		}
	}
	err = cmd.Wait()
	if tty {
		fmt.Fprint(w, "\r\033[K")
	}
	if err != nil {
		return fmt.Errorf("go build %s failed after %s: %w\n%s", pkg, time.Since(start).Round(time.Second), err, strings.Join(other, "\n"))
	}
	fmt.Fprintf(w, "  built: %s\n", status())
	return nil
}

// installedWorker returns a worker binary of the starter's own build
// (same module, version and VCS revision, as recorded in both binaries)
// next to the starter or on PATH, or "".
func installedWorker(self build) string {
	if self.version == "" || self.version == "(devel)" {
		return ""
	}
	var cands []string
	if exe, err := os.Executable(); err == nil {
		cands = append(cands, filepath.Join(filepath.Dir(exe), "worker"))
	}
	if p, err := exec.LookPath("worker"); err == nil {
		cands = append(cands, p)
	}
	for _, c := range cands {
		if bi, err := buildinfo.ReadFile(c); err == nil {
			if b := buildOf(bi); b.modPath == self.modPath && b.version == self.version && b.revision == self.revision {
				return c
			}
		}
	}
	return ""
}
