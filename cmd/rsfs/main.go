// Command rsfs mounts a ResourceSync Source as a read-only file system.
package main

import (
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"rsfs/fetch"
	"rsfs/logfile"
	"rsfs/mountutil"
	"rsfs/sdnotify"
)

// cli is one run of rsfs: what its commands share, which main makes.
type cli struct {
	logs *logfile.Output // where the logs go
	// envFixed is what main changed in the environment of a helper run by
	// mount(8) (mountutil.FixHelperEnv), which a mount logs.
	envFixed []string
	systemd  sdnotify.Notifier // a mount's link to systemd
}

func main() {
	c := &cli{logs: logfile.New(), envFixed: mountutil.FixHelperEnv()}
	fetch.Version = readBuildInfo().UserAgent()
	root := c.rootCmd()
	err := rewriteHelperArgs(root)
	if err == nil {
		err = root.Execute()
	}
	code, msg := exitCode(err)
	if msg != nil {
		c.logs.PrintError("rsfs: " + oneLine(msg))
	}
	os.Exit(code)
}

// rootCmd is rsfs's command tree, for a run of its own.
func rootCmd() *cobra.Command { return (&cli{logs: logfile.New()}).rootCmd() }

func (c *cli) rootCmd() *cobra.Command {
	var logLevel, logFormat string
	root := &cobra.Command{
		Use:   "rsfs",
		Short: "Mount a ResourceSync Source as a read-only file system",
		Long: `rsfs mounts a ResourceSync Source (ANSI/NISO Z39.99-2017), or an Atom-PMH
feed, as a read-only FUSE file system, and follows its changes.

'rsfs URL DIR -o OPTIONS' is 'rsfs mount URL DIR' as mount(8) and
/etc/fstab run it (mount -t fuse.rsfs): each option is the mount flag of
that name, with _ for -.

Exit status: 0 done; 1 failed; 2 the command line is wrong (an unknown
command or flag, a wrong number of arguments, a flag value out of range).
audit: 0 no drift, 1 drift, 2 trouble.`,
		Version:       readBuildInfo().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// `rsfs inspcet`: unknown command "inspcet" (did you mean inspect?)
		SuggestionsMinimumDistance: 2,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return c.setupLogging(logLevel, logFormat)
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "text", "log format: text (logfmt), or json (one object a line, for log shippers)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return asUsage(flagError(err)) })
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(inspectCmd(), c.mountCmd(), holdCmd(), releaseCmd(), statusCmd(), pollCmd(), auditCmd(), cacheCmd(), warmCmd(), versionCmd())
	usageArgs(root)
	addCompletions(root)
	return root
}

// setupLogging sets the root logger of --log-level and --log-format.
func (c *cli) setupLogging(level, format string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", level)
	}
	if format != "text" && format != "json" {
		return usagef("--log-format %q: want text or json", format)
	}
	c.logs.Setup(l, format == "json")
	return nil
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
