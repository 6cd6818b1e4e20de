package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"rsfs/logfile"
	"rsfs/mountutil"
	"rsfs/report"
	"rsfs/statedir"
)

func cacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List and prune the state directories under --cache-dir",
		Long: `Each Source rsfs has mounted has a state directory under --cache-dir (default
$XDG_CACHE_HOME/rsfs): its catalog snapshot and its disk cache of blocks.
'cache list' shows them; 'cache prune' removes those last used long ago, or
the least recently used above a total size. A state directory a mount holds
is never removed.`,
	}
	cmd.AddCommand(cacheListCmd(), cachePruneCmd())
	return cmd
}

func cacheListCmd() *cobra.Command {
	var cacheDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show each state directory: its Source, size, when last used, and whether mounted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			base, err := cacheBase(cacheDir)
			if err != nil {
				return err
			}
			dirs, err := statedir.List(base)
			if err != nil {
				return fmt.Errorf("cache list: %w", err)
			}
			if asJSON {
				if dirs == nil {
					dirs = []statedir.Info{}
				}
				return report.JSON(cmd.OutOrStdout(), dirs)
			}
			statedir.WriteTable(cmd.OutOrStdout(), base, dirs, time.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&cacheDir, "cache-dir", "", "the --cache-dir of the mounts (default $XDG_CACHE_HOME/rsfs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func cachePruneCmd() *cobra.Command {
	var cacheDir, olderThan, maxSize string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove state directories last used long ago, or the least recently used above a total size",
		Long: `prune removes the state directories last used longer ago than --older-than,
then, least recently used first, those that keep the total above --max-size
(--max-size 0: every one). One that a mount holds (or that is closing) is
kept. Removing one loses only what rsfs remembered: the next mount of its
Source reads the Resource Lists again. With --older-than, the mounts' log
files under $XDG_CACHE_HOME/rsfs/logs last written longer ago are removed
too, but never the log of a mount that is running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := statedir.PruneOptions{DryRun: dryRun, Now: time.Now()}
			var err error
			if olderThan != "" {
				if opts.OlderThan, err = report.ParseAge(olderThan); err != nil {
					return usagef("--older-than: %w", err)
				}
			}
			if maxSize != "" {
				if opts.MaxTotal, err = report.ParseSize(maxSize); err != nil {
					return usagef("--max-size: %w", err)
				}
				opts.All = opts.MaxTotal == 0
			}
			if olderThan == "" && maxSize == "" {
				return usagef("cache prune: give --older-than AGE and/or --max-size SIZE")
			}
			base, err := cacheBase(cacheDir)
			if err != nil {
				return err
			}
			pruned, total, err := statedir.Prune(base, opts)
			if err != nil {
				return fmt.Errorf("cache prune: %w", err)
			}
			out := cmd.OutOrStdout()
			statedir.WritePruned(out, base, pruned, total, opts)
			if opts.OlderThan > 0 { // as for the state directories, 0 removes none by age
				return pruneLogs(out, base, opts)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cacheDir, "cache-dir", "", "the --cache-dir of the mounts (default $XDG_CACHE_HOME/rsfs)")
	fl.StringVar(&olderThan, "older-than", "", "remove those last used longer ago than this (e.g. 30d, 2w, 12h)")
	fl.StringVar(&maxSize, "max-size", "", "then remove the least recently used until all together take at most this (e.g. 20GiB; 0: every one no mount holds)")
	fl.BoolVar(&dryRun, "dry-run", false, "say what would be removed, and remove nothing")
	return cmd
}

// cacheBase is the directory holding the state directories.
func cacheBase(cacheDir string) (string, error) {
	base := statedir.Base(cacheDir)
	switch base {
	case statedir.None:
		return "", usagef("--cache-dir none: nothing is remembered")
	case "":
		return "", fmt.Errorf("--cache-dir: no user cache directory ($XDG_CACHE_HOME and $HOME unset); give --cache-dir")
	}
	return base, nil
}

// pruneLogs removes the mounts' log files (logfile.Prune) last written
// longer ago than opts.OlderThan, but never the log of a mount that is
// running: one mounted now, or one whose state directory under base a
// mount holds while it loads.
func pruneLogs(out io.Writer, base string, opts statedir.PruneOptions) error {
	dir, pruned, err := logfile.Prune(opts.OlderThan, opts.Now, opts.DryRun, liveMounts(base))
	if err != nil {
		return fmt.Errorf("cache prune: %w", err)
	}
	if dir == "" {
		return nil
	}
	logfile.WritePruned(out, dir, pruned, opts.Now, opts.DryRun)
	return nil
}

// liveMounts are the mount points of the mounts running now: those
// mounted (the mount table), and those a state directory's lock names
// while they load.
func liveMounts(base string) []string {
	live := mountutil.RsfsMounts("", true, false)
	dirs, _ := statedir.List(base)
	for _, d := range dirs {
		if d.Mounted && d.MountPoint != "" {
			live = append(live, d.MountPoint)
		}
	}
	return live
}
