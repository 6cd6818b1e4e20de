package main

import (
	"io"

	"github.com/spf13/cobra"

	"rsfs/buildinfo"
)

// version overrides the module version when set at build time (-ldflags
// "-X main.version=1.2.3", for a packager whose build has no VCS stamp);
// rsfs needs no -ldflags: it reads what the go command stamped.
var version string

// readBuildInfo is rsfs's build (buildinfo.Read), with version.
func readBuildInfo() buildinfo.Info { return buildinfo.Read(version) }

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of rsfs, its revision and the Go version that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), readBuildInfo().String())
			return err
		},
	}
}
