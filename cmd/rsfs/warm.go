package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"rsfs/fs"
	"rsfs/prefetch"
	"rsfs/termui"
)

// warmPoll is how often rsfs warm asks the mount for its progress.
const warmPoll = 200 * time.Millisecond

func warmCmd() *cobra.Command {
	var asJSON, release bool
	cmd := &cobra.Command{
		Use:   "warm PATH...",
		Short: "Fetch every file under PATH into its mount's disk cache, and keep them there",
		Long: `warm fills the disk cache of the rsfs mount that PATH (a file or directory
inside it) belongs to with every file under PATH, so that they can be read
with the Source away (offline, on a train, in an air-gapped room). Files
already on disk are not fetched again. It reads from the Source's Resource
Dump packages where they hold the files, else file by file, through the
same per-origin limits as every other request and after the reads users
wait on; each file is checked against its published length and hash.

Warmed files are pinned: they stay on disk ahead of ordinary eviction until
'rsfs warm --release PATH', or until --cache-max-size forces them out. A
subtree that does not fit --cache-max-size is refused before anything is
fetched, saying how much more it needs.

On a terminal a progress line shows files, bytes, rate and time left; one
summary line ends it (--json: one JSON object per PATH instead). Exit
status: 0 every file is on disk; 1 something could not be fetched (each
is named); 2 the command line is wrong (a PATH that is not in an rsfs
mount included).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if release {
				return runRelease(out, args, asJSON)
			}
			return runWarm(out, cmd.ErrOrStderr(), args, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per PATH, for scripts")
	cmd.Flags().BoolVar(&release, "release", false, "unpin the files under PATH: they age out of the disk cache as any others")
	return cmd
}

func runWarm(out, errw io.Writer, args []string, asJSON bool) error {
	targets := make([]*fs.Warming, len(args))
	for i, a := range args {
		abs, err := resolveInMount(a)
		if err != nil {
			return err
		}
		targets[i] = fs.NewWarming(abs)
	}
	bar := termui.NewWarm(errw, !asJSON && termui.IsTerminal(errw))
	i, err := fs.WatchWarmings(targets, warmPoll, func() { bar.Show(warmTotals(targets)) })
	bar.End() // an error is said on a line of its own
	if err != nil {
		return fmt.Errorf("warm %s: %w", args[i], err)
	}
	return warmSummary(out, args, targets, asJSON)
}

// warmSummary prints one line (or JSON object) per PATH and names each
// file not fetched; it is the exit status's error.
func warmSummary(out io.Writer, args []string, targets []*fs.Warming, asJSON bool) error {
	failed := false
	for i, t := range targets {
		j := t.Job
		failed = failed || j.FailedCount > 0 || j.Error != ""
		if asJSON {
			data, _ := json.Marshal(j)
			fmt.Fprintf(out, "%s\n", data)
			continue
		}
		j.WriteText(out, args[i], "--cache-max-size", warmError)
	}
	if failed {
		return exitWith(exitFailure, nil)
	}
	return nil
}

func runRelease(out io.Writer, args []string, asJSON bool) error {
	for _, a := range args {
		abs, err := resolveInMount(a)
		if err != nil {
			return err
		}
		data, err := fs.GetxattrAll(abs, fs.XattrRelease)
		if err != nil {
			return fmt.Errorf("warm --release %s: %w", a, err)
		}
		if asJSON {
			fmt.Fprintf(out, "%s\n", data)
			continue
		}
		var rel prefetch.Released
		if err := json.Unmarshal(data, &rel); err != nil {
			return fmt.Errorf("warm --release %s: %w", a, err)
		}
		rel.WriteText(out, a)
	}
	return nil
}

// resolveInMount is PATH's absolute path, if it is inside an rsfs mount
// (fs.InMount; a usage error otherwise).
func resolveInMount(p string) (string, error) {
	abs, err := fs.InMount(p)
	if errors.Is(err, fs.ErrNotInMount) {
		return "", asUsage(err)
	}
	return abs, err
}

// warmTotals are what the jobs of targets have done so far, together.
func warmTotals(targets []*fs.Warming) termui.WarmTotals {
	var t termui.WarmTotals
	for _, tg := range targets {
		t.Files += tg.Job.Files
		t.DoneFiles += tg.Job.DoneFiles
		t.Bytes += tg.Job.Bytes
		t.DoneBytes += tg.Job.DoneBytes
		t.Fetched += tg.Job.FetchedBytes
	}
	return t
}
