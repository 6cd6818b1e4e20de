package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"rsfs/mountutil"
)

// helperArgs rewrites the form mount(8) and mount.fuse3 use, `rsfs URL DIR
// -o OPTIONS`, into `rsfs mount URL DIR --flag...`: an argument list that
// starts with a URL (a word with a ':', '/' or '.', which no command name
// has) is a mount; any other first word is left to cobra, which runs the
// command it names, completes (__complete), or says it is unknown and
// suggests one (`rsfs inspcet`: did you mean inspect?). Each -o option is
// a flag of mount with its underscores as dashes (poll_interval=30s is
// --poll-interval=30s, allow_other is --allow-other). Other arguments pass
// through unchanged.
func helperArgs(args []string, subcommands map[string]bool, lookup func(string) *pflag.Flag) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	isMount := args[0] == "mount"
	if !isMount && !subcommands[args[0]] && !strings.HasPrefix(args[0], "-") && strings.ContainsAny(args[0], ":/.") {
		isMount = true
		args = append([]string{"mount"}, args...)
	}
	if !isMount {
		return args, nil
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		var opts string
		switch {
		case a == "-o":
			if i+1 == len(args) {
				return nil, usagef("-o: missing options")
			}
			i++
			opts = args[i]
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			opts = a[2:]
		default:
			out = append(out, a)
			continue
		}
		flags, err := optionFlags(opts, lookup)
		if err != nil {
			return nil, err
		}
		out = append(out, flags...)
	}
	return out, nil
}

// optionFlags turns a comma-separated -o list into mount flags.
func optionFlags(opts string, lookup func(string) *pflag.Flag) ([]string, error) {
	var out []string
	for _, o := range strings.Split(opts, ",") {
		if o == "" || mountutil.GenericOption(o) {
			continue
		}
		name, value, hasValue := strings.Cut(o, "=")
		name = strings.ReplaceAll(name, "_", "-")
		f := lookup(name)
		if f == nil || (f.Hidden && f.Deprecated == "") {
			return nil, usagef("-o %s: unknown mount option (see 'rsfs mount --help': every flag is also an option, with _ for -)", o)
		}
		switch {
		case hasValue:
			out = append(out, "--"+name+"="+value)
		case f.Value.Type() == "bool":
			out = append(out, "--"+name)
		default:
			return nil, usagef("-o %s: needs a value (%s=...)", o, strings.ReplaceAll(name, "-", "_"))
		}
	}
	return out, nil
}

// rewriteHelperArgs applies helperArgs to os.Args for root, so that a
// background mount started from the helper form re-runs the mount form.
func rewriteHelperArgs(root *cobra.Command) error {
	subcommands := map[string]bool{"help": true, "completion": true}
	var mount *cobra.Command
	for _, c := range root.Commands() {
		subcommands[c.Name()] = true
		for _, a := range c.Aliases {
			subcommands[a] = true
		}
		if c.Name() == "mount" {
			mount = c
		}
	}
	lookup := func(name string) *pflag.Flag {
		if f := mount.Flags().Lookup(name); f != nil {
			return f
		}
		return root.PersistentFlags().Lookup(name)
	}
	args, err := helperArgs(os.Args[1:], subcommands, lookup)
	if err != nil {
		return err
	}
	os.Args = append(os.Args[:1], args...)
	root.SetArgs(args)
	return nil
}
