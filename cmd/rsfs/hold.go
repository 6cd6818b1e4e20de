package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"rsfs/mountutil"
)

func holdCmd() *cobra.Command {
	var d time.Duration
	cmd := &cobra.Command{
		Use:   "hold DIR",
		Short: "Hold changes back at a mount, for a stable view (e.g. during a backup)",
		Long: `hold stops the mount at DIR from applying the Source's changes until
'rsfs release DIR' or until --for has passed. Files keep the bytes and
metadata they had; changes are applied, in order, when the hold ends.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if d <= 0 {
				return usagef("--for %s: want a duration above 0 (e.g. 6h)", d)
			}
			until, err := mountutil.Hold(args[0], d)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "changes held back at %s until %s\n", args[0], until.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().DurationVar(&d, "for", 6*time.Hour, "how long the hold lasts at most")
	return cmd
}

func releaseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "release DIR",
		Short: "End a hold: the mount at DIR applies the Source's changes again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mountutil.Release(args[0])
		},
	}
}
