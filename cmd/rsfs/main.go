// Command rsfs mounts a ResourceSync Source as a read-only file system.
package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"rsfs/fetch"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	fetch.Version = version
	root := rootCmd()
	err := rewriteHelperArgs(root)
	if err == nil {
		err = root.Execute()
	}
	if err != nil {
		printError(err)
		if isUsage(err) {
			os.Exit(exitUsage)
		}
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	var logLevel, logFormat string
	root := &cobra.Command{
		Use:           "rsfs",
		Short:         "Mount a ResourceSync Source as a read-only file system",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return setupLogging(logLevel, logFormat)
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "text", "log format: text (logfmt), or json (one object a line, for log shippers)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return asUsage(err) })
	root.AddCommand(inspectCmd(), mountCmd(), holdCmd(), releaseCmd(), statusCmd(), auditCmd(), cacheCmd())
	return root
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
