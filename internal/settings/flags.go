package settings

import "github.com/spf13/pflag"

// ConfigFlag is the flag that names the settings file.
const ConfigFlag = "config"

// AddFlags registers one flag per key with the key's dotted name
// (--retry.maxRetries; --data-dir for dataDir) and --config FILE. Flags
// keep the text the user typed; Load parses it with the same strict rules
// as the file and the environment, so every source fails the same way.
// Boolean flags may be given bare (--dev.ui means true). Lists are
// ";"-separated, and a list flag given again adds its items: a second
// --tools.policy rule must not drop the first. It panics, as pflag does,
// if a name is already defined.
func AddFlags(fs *pflag.FlagSet) {
	d := Defaults()
	fs.String(ConfigFlag, "", "settings file (default $"+EnvConfig+" or <data-dir>/"+FileName+")")
	for i := range schema {
		k := &schema[i]
		f := fs.VarPF(&textFlag{text: k.defaultText(&d), typ: string(k.kind()), list: k.kind() == kindList}, k.flag(), "", k.desc)
		if k.kind() == kindBool {
			f.NoOptDefVal = "true"
		}
	}
}

// textFlag is a pflag.Value that stores text unparsed (see AddFlags). A
// list's later values are appended, ";"-separated; an empty one adds
// nothing.
type textFlag struct {
	text, typ string
	list, set bool
}

func (f *textFlag) String() string { return f.text }
func (f *textFlag) Type() string   { return f.typ }

func (f *textFlag) Set(s string) error {
	switch {
	case !f.list || !f.set || f.text == "":
		f.text = s
	case s != "":
		f.text += ";" + s
	}
	f.set = true
	return nil
}
