package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/settings"
)

const authUsage = `starter auth add PROVIDER [--id ID] [--kind api_key|oauth] [--from-env VAR]   (secret on stdin)
       starter auth list [--json]
       starter auth remove ID`

// authProviders are the providers whose credentials the store holds.
var authProviders = []string{"anthropic", "openai"}

func runAuth(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(env.Stderr, "usage: "+authUsage)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	switch args[0] {
	case "add":
		return authAdd(env, args[1:])
	case "list":
		return authList(env, args[1:])
	case "remove", "rm":
		return authRemove(env, args[1:])
	}
	return fail(env, "auth", fmt.Errorf("unknown subcommand %q (usage: %s)", args[0], authUsage))
}

// authFile parses args (the settings flags, for the data dir, the
// command's own and n arguments: parseArgs), loads the settings and
// opens the store.
func (c *common) authFile(args []string, n int, want string) (*auth.File, settings.Settings, bool) {
	if !c.parseArgs(c.env, args, n, want) {
		return nil, settings.Settings{}, false
	}
	s, ok := c.settings(c.env)
	if !ok {
		return nil, s, false
	}
	f, err := auth.OpenFile(app.AuthPath(s), auth.FileOptions{})
	if err != nil {
		fail(c.env, c.fs.Name(), err)
		return nil, s, false
	}
	return f, s, true
}

// authAdd stores a credential. The secret is read from stdin (its first
// line) or from an environment variable, never from the command line,
// where shells and process lists would keep it.
func authAdd(env Env, args []string) int {
	c := bareFlags("auth add", env)
	id := c.fs.String("id", "", "credential id (default: PROVIDER-N)")
	kind := c.fs.String("kind", auth.KindAPIKey, "api_key or oauth (an OAuth access token, kept as an opaque secret)")
	fromEnv := c.fs.String("from-env", "", "read the secret from this environment variable instead of stdin")
	f, _, ok := c.authFile(args, 1, "one PROVIDER ("+strings.Join(authProviders, " or ")+")")
	if !ok {
		return ExitUsage
	}
	provider := c.fs.Arg(0)
	if !slices.Contains(authProviders, provider) {
		return fail(env, "auth add", fmt.Errorf("unknown provider %q (known: %s)", provider, strings.Join(authProviders, ", ")))
	}
	secret, err := readSecret(env, *fromEnv)
	if err != nil {
		return fail(env, "auth add", err)
	}
	if *id == "" {
		if *id, err = freeID(f, provider); err != nil {
			return fail(env, "auth add", err)
		}
	}
	if err := f.Add(auth.Credential{ID: *id, Provider: provider, Kind: *kind, Secret: secret}); err != nil {
		return fail(env, "auth add", err)
	}
	fmt.Fprintf(env.Stdout, "added credential %s for %s to %s\n", *id, provider, f.Path())
	return ExitOK
}

func readSecret(env Env, fromEnv string) (string, error) {
	if fromEnv != "" {
		v, ok := os.LookupEnv(fromEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("environment variable %s is not set", fromEnv)
		}
		return strings.TrimSpace(v), nil
	}
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(nil, 64<<10)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			return s, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read the secret from stdin: %w", err)
	}
	return "", errors.New("no secret on stdin (pipe it in, or use --from-env VAR)")
}

// freeID is PROVIDER-N with the smallest N not in use.
func freeID(f *auth.File, provider string) (string, error) {
	entries, err := f.List()
	if err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		id := fmt.Sprintf("%s-%d", provider, n)
		if !slices.ContainsFunc(entries, func(e auth.Entry) bool { return e.ID == id }) {
			return id, nil
		}
	}
}

// authList prints every credential with its block and rate-limit state;
// never a secret. The rate-limit windows are those the workers use (SPEC
// 18.1): with session.store postgres the cluster's, in the database;
// otherwise auth.json's.
func authList(env Env, args []string) int {
	c := bareFlags("auth list", env)
	asJSON := c.fs.Bool("json", false, "print JSON (one object per line)")
	f, s, ok := c.authFile(args, 0, "")
	if !ok {
		return ExitUsage
	}
	entries, err := authEntries(f, s)
	if err != nil {
		return fail(env, "auth list", err)
	}
	if *asJSON {
		printEach(env.Stdout, entries)
		return ExitOK
	}
	if len(entries) == 0 {
		fmt.Fprintf(env.Stdout, "no credentials in %s (add one with: starter auth add PROVIDER < keyfile)\n", f.Path())
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROVIDER\tKIND\tSTATE\tSESSIONS")
	for _, e := range entries {
		var states []string
		if !e.BlockedUntil.IsZero() {
			states = append(states, "blocked until "+e.BlockedUntil.Local().Format(time.DateTime))
		}
		if !e.RateLimitedUntil.IsZero() {
			states = append(states, "rate-limited until "+e.RateLimitedUntil.Local().Format(time.DateTime))
		}
		state := cmp.Or(strings.Join(states, ", "), "ok")
		id := e.ID
		switch {
		case e.Implicit:
			id += " (environment)"
		case e.WindowOnly && e.ID == "-":
			id += " (no credential)"
		case e.WindowOnly:
			id += " (not in this auth.json)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", id, e.Provider, cmp.Or(e.Kind, "-"), state, e.Sessions)
	}
	if err := tw.Flush(); err != nil {
		return fail(env, "auth list", err)
	}
	return ExitOK
}

// authEntries lists f's credentials with the rate-limit windows the
// workers of settings s use: the PostgreSQL database's with session.store
// postgres, else auth.json's.
func authEntries(f *auth.File, s settings.Settings) ([]auth.Entry, error) {
	if s.Session.Store != settings.SessionStorePostgres {
		return f.List()
	}
	st, err := client.OpenSessionStore(s)
	if err != nil {
		return nil, fmt.Errorf("read the rate-limit windows: %w", err)
	}
	pg, ok := st.(*pgstore.Store)
	if !ok {
		return nil, fmt.Errorf("read the rate-limit windows: session store %T is not PostgreSQL", st)
	}
	defer pg.Close()
	windows, now, err := pg.Windows().List()
	if err != nil {
		return nil, err
	}
	return f.ListWithWindows(windows, now)
}

// authRemove deletes a credential by id.
func authRemove(env Env, args []string) int {
	c := bareFlags("auth remove", env)
	f, _, ok := c.authFile(args, 1, "one credential ID (see starter auth list)")
	if !ok {
		return ExitUsage
	}
	if err := f.Remove(c.fs.Arg(0)); err != nil {
		return fail(env, "auth remove", err)
	}
	fmt.Fprintf(env.Stdout, "removed credential %s from %s\n", c.fs.Arg(0), f.Path())
	return ExitOK
}
