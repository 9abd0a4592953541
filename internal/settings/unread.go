package settings

import "fmt"

// Unread lists the keys that were set in a source opts loads (a flag, an
// environment variable, the settings file) and that program does not read
// (reads reports false, e.g. WorkerReads for the worker): one line each,
// naming the key, where it was set, the program and where the key takes
// effect, so a setting given to the wrong program is not ignored in
// silence. Keys at their default are not listed. program is the subject
// of "not read by", e.g. "the worker". The error is Load's.
func Unread(opts LoadOptions, program string, reads func(KeyInfo) bool) ([]string, error) {
	_, origins, err := loadWithOrigins(opts)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range Keys() {
		o := origins[k.Key]
		if reads(k) || o.Kind == OriginDefault || o.Kind == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s) is not read by %s: %s", k.Key, o, program, k.TakesEffect()))
	}
	return out, nil
}
