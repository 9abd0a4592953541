package settings

import "fmt"

// Source says where Load(opts) takes key's value from: "flag --name",
// "environment NAME", "<file>:<line>", or "" when the built-in default
// applies. Programs use it to tell a value chosen on purpose from a
// default, e.g. the worker's opt-in to the scripted model outside --dev.
func Source(opts LoadOptions, key string) (string, error) {
	if lookupKey(key) == nil {
		return "", fmt.Errorf("settings: unknown key %q", key)
	}
	e := opts.environment()
	envVals, err := readEnv(e)
	if err != nil {
		return "", err
	}
	flagVals, err := readFlags(opts.Flags)
	if err != nil {
		return "", err
	}
	path, namedBy, _ := locateFile(opts, e, envVals, flagVals, defaultsFor(e).DataDir)
	file, err := readFile(path)
	switch {
	case err == nil:
	case isNotExist(err) && namedBy == "":
		file = &fileLayer{path: path, values: map[string]fileValue{}}
	default:
		return "", err
	}
	return winnerSource(key, file, envVals, flagVals), nil
}
