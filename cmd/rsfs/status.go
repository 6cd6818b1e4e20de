package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"rsfs/fs"
	"rsfs/report"
	"rsfs/status"
)

func statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status DIR",
		Short: "Say what the mount at DIR is doing: following, cache, traffic, errors",
		Long: `status asks the rsfs mount at DIR for its state, through the extended
attribute user.rsfs.status on its root: the Source, each set's follow
position, the polls, holds, the cache, what was fetched from where, and the
failures of the last hour. Whoever can see the mount can ask.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := fs.ReadStatus(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				err = report.IndentJSON(cmd.OutOrStdout(), data)
			} else {
				err = status.WriteTextOf(cmd.OutOrStdout(), data, statusHints())
			}
			if err != nil {
				return fmt.Errorf("status of %s: %w", args[0], err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// statusHints are the flags the status names where one would change what
// it says, for `rsfs status`'s text and for the mount's Fix.
func statusHints() status.Hints {
	return status.Hints{NoFollow: "--poll-interval 0", NoDisk: "--cache-dir none", MaxRate: "--max-rate",
		Offline: "--offline", Timeout: "--timeout"}
}
