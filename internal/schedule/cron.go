package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronFields are the fields of a five-field cron expression with their
// ranges and the names they accept.
var cronFields = []struct {
	name     string
	min, max int
	names    []string
}{
	{"minute", 0, 59, nil},
	{"hour", 0, 23, nil},
	{"day of month", 1, 31, []string{"L"}},
	{"month", 1, 12, []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	{"day of week", 0, 7, []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}

// cronMacros are the @-forms the server accepts besides @every.
var cronMacros = map[string]bool{"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true, "@daily": true, "@midnight": true, "@hourly": true}

// ValidateCron reports, in one line, a cron expression the server would
// refuse: five fields (minute hour day-of-month month day-of-week), an
// @-macro or "@every DURATION", optionally after "CRON_TZ=ZONE ". The
// server checks the six- and seven-field forms (seconds, year) itself.
func ValidateCron(expr string) error {
	e := strings.TrimSpace(expr)
	if rest, ok := strings.CutPrefix(e, "CRON_TZ="); ok {
		zone, fields, _ := strings.Cut(rest, " ")
		if _, err := time.LoadLocation(zone); err != nil {
			return fmt.Errorf("invalid --cron %q: unknown time zone %q", expr, zone)
		}
		e = strings.TrimSpace(fields)
	}
	if strings.HasPrefix(e, "@") {
		if d, ok := strings.CutPrefix(e, "@every "); ok {
			if v, err := time.ParseDuration(strings.TrimSpace(d)); err != nil || v < MinEvery {
				return fmt.Errorf("invalid --cron %q: @every wants a duration of at least %s", expr, MinEvery)
			}
			return nil
		}
		if !cronMacros[e] {
			return fmt.Errorf("invalid --cron %q: unknown macro (want @hourly, @daily, @weekly, @monthly, @yearly or @every DURATION)", expr)
		}
		return nil
	}
	fields := strings.Fields(e)
	switch {
	case len(fields) == 6 || len(fields) == 7:
		return nil // seconds and/or year: the server checks them
	case len(fields) != 5:
		return fmt.Errorf("invalid --cron %q: %d fields, want 5 (minute hour day-of-month month day-of-week)", expr, len(fields))
	}
	for i, f := range fields {
		if err := checkCronField(f, i); err != nil {
			return fmt.Errorf("invalid --cron %q: %w", expr, err)
		}
	}
	return nil
}

// checkCronField checks field i: a comma list of *, ?, N, N-M, each with
// an optional /STEP, N a number in range or a name.
func checkCronField(f string, i int) error {
	spec := cronFields[i]
	for _, item := range strings.Split(f, ",") {
		rng, step, hasStep := strings.Cut(item, "/")
		if hasStep {
			if n, err := strconv.Atoi(step); err != nil || n < 1 {
				return fmt.Errorf("%s field %q: step %q is not a positive number", spec.name, f, step)
			}
		}
		if rng == "*" || rng == "?" {
			continue
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		parts := []string{lo}
		if isRange {
			parts = append(parts, hi)
		}
		for _, p := range parts {
			if !cronValue(p, spec.min, spec.max, spec.names) {
				return fmt.Errorf("%s field %q: %q is not in %d-%d", spec.name, f, p, spec.min, spec.max)
			}
		}
	}
	return nil
}

func cronValue(p string, min, max int, names []string) bool {
	if n, err := strconv.Atoi(p); err == nil {
		return n >= min && n <= max
	}
	for _, name := range names {
		if strings.EqualFold(p, name) {
			return true
		}
	}
	return false
}
