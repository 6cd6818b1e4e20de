package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"rsfs/fs"
	"rsfs/mountutil"
)

func holdCmd() *cobra.Command {
	var d time.Duration
	cmd := &cobra.Command{
		Use:   "hold DIR",
		Short: "Hold changes back at a mount, for a stable view (e.g. during a backup)",
		Long: `hold stops the mount at DIR from applying the Source's changes until
'rsfs release DIR' or until --for has passed. Files keep the bytes and
metadata they had; changes are applied, in order, when the hold ends.
hold writes the hold file the mount names in its status, and succeeds only
once the mount's status shows the hold.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if d <= 0 {
				return usagef("--for %s: want a duration above 0 (e.g. 6h)", d)
			}
			until := time.Now().Add(d).UTC()
			h, err := mountutil.FindHolder(args[0], fs.HoldStatus)
			if err == nil {
				err = h.Hold(until)
			}
			if err != nil {
				return fmt.Errorf("hold %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "changes held back at %s until %s\n", h.Dir, until.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().DurationVar(&d, "for", 6*time.Hour, "how long the hold lasts at most (above 0)")
	return cmd
}

func releaseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "release DIR",
		Short: "End a hold: the mount at DIR applies the Source's changes again",
		Long: `release removes the hold of the mount at DIR, and succeeds only once the
mount's status shows no hold.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := mountutil.FindHolder(args[0], fs.HoldStatus)
			if err == nil {
				err = h.Release()
			}
			if err != nil {
				return fmt.Errorf("release %s: %w", args[0], err)
			}
			if h.Held {
				fmt.Fprintf(cmd.OutOrStdout(), "changes at %s are applied again\n", h.Dir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "no hold at %s\n", h.Dir)
			}
			return nil
		},
	}
}
