package main

import (
	"github.com/spf13/cobra"

	"rsfs/fs"
	"rsfs/report"
)

func pollCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "poll DIR",
		Short: "Poll the Source of the mount at DIR now, and say what it applied",
		Long: `poll asks the rsfs mount at DIR to poll its Source now, rather than at its
next --poll-interval (even with --poll-interval 0), waits for that poll,
and prints what it applied: the changes, reloads and drift repaired, and
each set's position. For a publisher who wants to see a change at once.
The mount polls at most once a second; while changes are held back (rsfs
hold) it does not poll, and poll fails. The channel is the extended
attribute user.rsfs.poll on the mount's root; only the user the mount runs
as, and root, may ask. Exit status 0 when the poll succeeded, 1 otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := fs.AskPoll(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				if err := report.JSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			}
			if err := rep.Err(); err != nil {
				return err
			}
			if !asJSON {
				rep.WriteText(cmd.OutOrStdout())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what the poll did as JSON")
	return cmd
}
