package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"rsfs/fs"
	"rsfs/prefetch"
	"rsfs/report"
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

// warmTarget is one PATH and its job.
type warmTarget struct {
	arg, abs string
	id       string
	job      prefetch.Job
}

func runWarm(out, errw io.Writer, args []string, asJSON bool) error {
	targets := make([]*warmTarget, len(args))
	for i, a := range args {
		abs, err := resolveInMount(a)
		if err != nil {
			return err
		}
		targets[i] = &warmTarget{arg: a, abs: abs, id: newJobID()}
	}
	bar := termui.NewWarm(errw, !asJSON && termui.IsTerminal(errw))
	for {
		done := true
		for _, t := range targets {
			if t.job.Finished {
				continue
			}
			if err := readJob(t); err != nil {
				bar.End() // the error is said on a line of its own
				return err
			}
			done = done && t.job.Finished
		}
		bar.Show(warmTotals(targets))
		if done {
			break
		}
		time.Sleep(warmPoll)
	}
	bar.End()
	return warmSummary(out, targets, asJSON)
}

// readJob reads t's job as the mount has it now.
func readJob(t *warmTarget) error {
	data, err := getxattrAll(t.abs, fs.XattrWarmPrefix+t.id)
	if err != nil {
		return fmt.Errorf("warm %s: %w", t.arg, err)
	}
	if err := json.Unmarshal(data, &t.job); err != nil {
		return fmt.Errorf("warm %s: %w", t.arg, err)
	}
	return nil
}

// warmSummary prints one line (or JSON object) per PATH and names each
// file not fetched; it is the exit status's error.
func warmSummary(out io.Writer, targets []*warmTarget, asJSON bool) error {
	failed := false
	for _, t := range targets {
		j := t.job
		failed = failed || j.FailedCount > 0 || j.Error != ""
		if asJSON {
			data, _ := json.Marshal(j)
			fmt.Fprintf(out, "%s\n", data)
			continue
		}
		if j.Error != "" {
			if j.Needs > 0 {
				fmt.Fprintf(out, "%s: %d files, %s, do not fit --cache-max-size %s: it needs %s more; nothing fetched\n",
					t.arg, j.Files, report.Size(j.Bytes), report.Size(j.DiskMax), report.Size(j.Needs))
			} else {
				fmt.Fprintf(out, "%s: %s; nothing fetched\n", t.arg, warmError(j.Error))
			}
			continue
		}
		onDisk := j.Files - j.FailedCount
		fmt.Fprintf(out, "%s: %d of %d files on disk (%s): %d fetched (%s), %d were on disk already, %d failed, in %s\n",
			t.arg, onDisk, j.Files, report.Size(j.DoneBytes), j.FetchedFiles, report.Size(j.FetchedBytes),
			j.OnDiskFiles, j.FailedCount, time.Duration(j.Took*float64(time.Second)).Round(10*time.Millisecond))
		for _, f := range j.Failed {
			fmt.Fprintf(out, "  not fetched: %s: %s\n", f.Path, f.Error)
		}
		if n := j.FailedCount - len(j.Failed); n > 0 {
			fmt.Fprintf(out, "  and %d more not fetched (the mount's log names each)\n", n)
		}
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
		data, err := getxattrAll(abs, fs.XattrRelease)
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
		fmt.Fprintf(out, "%s: released %d files (%s); they age out of the disk cache as any others\n", a, rel.Files, report.Size(rel.Bytes))
	}
	return nil
}

// resolveInMount is PATH's absolute path, if it is inside an rsfs mount
// (a usage error otherwise).
func resolveInMount(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", asUsage(err)
	}
	if _, err := os.Lstat(abs); err != nil {
		return "", asUsage(err)
	}
	_, err = getxattrAll(abs, fs.XattrCached)
	switch {
	case err == nil:
		return abs, nil
	case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.ENOTSUP):
		return "", usagef("%s is not inside an rsfs mount", p)
	case errors.Is(err, syscall.ENOTCONN):
		return "", fmt.Errorf("%s: the rsfs serving it is gone (stale mount: umount it)", p)
	}
	return "", fmt.Errorf("%s: %w", p, err)
}

// getxattrAll reads attribute name of path whatever its size.
func getxattrAll(path, name string) ([]byte, error) {
	buf := make([]byte, 1<<16)
	for {
		n, err := syscall.Getxattr(path, name, buf)
		switch {
		case err == nil:
			return buf[:n], nil
		case errors.Is(err, syscall.ERANGE) && len(buf) < 1<<24:
			buf = make([]byte, 4*len(buf))
		default:
			return nil, err
		}
	}
}

func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// warmTotals are what the jobs of targets have done so far, together.
func warmTotals(targets []*warmTarget) termui.WarmTotals {
	var t termui.WarmTotals
	for _, tg := range targets {
		t.Files += tg.job.Files
		t.DoneFiles += tg.job.DoneFiles
		t.Bytes += tg.job.Bytes
		t.DoneBytes += tg.job.DoneBytes
		t.Fetched += tg.job.FetchedBytes
	}
	return t
}
