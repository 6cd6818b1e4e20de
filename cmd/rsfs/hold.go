package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"rsfs/mountutil"
	"rsfs/status"
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
			m, err := holdTarget(args[0])
			if err != nil {
				return fmt.Errorf("hold %s: %w", args[0], err)
			}
			if err := mountutil.WriteHold(m.file, until); err != nil {
				return fmt.Errorf("hold %s: %w", args[0], err)
			}
			if err := m.acknowledged(func(r *status.Report) bool { return r.Hold != nil && r.Hold.Until.Equal(until) }); err != nil {
				m.restore() // no hold the mount does not see; an earlier one stays
				return fmt.Errorf("hold %s: the mount (pid %d) does not show the hold written to %s: %w", args[0], m.pid, m.file, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "changes held back at %s until %s\n", m.dir, until.Format(time.RFC3339))
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
			m, err := holdTarget(args[0])
			if err != nil {
				return fmt.Errorf("release %s: %w", args[0], err)
			}
			if err := mountutil.RemoveHold(m.file); err != nil {
				return fmt.Errorf("release %s: %w", args[0], err)
			}
			if err := m.acknowledged(func(r *status.Report) bool { return r.Hold == nil }); err != nil {
				return fmt.Errorf("release %s: the mount (pid %d) still shows a hold: %w", args[0], m.pid, err)
			}
			if m.held {
				fmt.Fprintf(cmd.OutOrStdout(), "changes at %s are applied again\n", m.dir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "no hold at %s\n", m.dir)
			}
			return nil
		},
	}
}

// holdMount is the rsfs mount a hold or release is for.
type holdMount struct {
	dir  string // its mount point, symlinks resolved
	file string // the hold file it reads
	pid  int
	held bool // it showed a hold before
	// earlier is the until of the hold it showed before, if any: a new
	// hold it does not show puts it back rather than end it.
	earlier time.Time
}

// restore puts the hold file back as it was before a hold the mount did
// not show: the earlier hold, or none.
func (m *holdMount) restore() {
	var err error
	if m.held {
		err = mountutil.WriteHold(m.file, m.earlier)
	} else {
		err = mountutil.RemoveHold(m.file)
	}
	if err != nil {
		slog.Warn("hold: the hold file could not be put back as it was", "hold_file", m.file, "err", err)
	}
}

// holdTarget finds the mount at dir (through symlinks) and, from its
// status, the hold file it reads.
func holdTarget(dir string) (*holdMount, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	rep, err := readReport(real)
	if err != nil {
		return nil, err
	}
	m := &holdMount{dir: real, file: rep.HoldFile, pid: rep.PID, held: rep.Hold != nil}
	if m.held {
		m.earlier = rep.Hold.Until
	}
	if m.file == "" {
		// A mount from before hold_file: its file is where it was.
		m.file = mountutil.HoldPath(real)
	}
	if err := mountutil.CheckHoldFile(m.file, processOwner(rep.PID)); err != nil {
		return nil, err
	}
	return m, nil
}

// acknowledged waits (2 s at most) until the mount's status satisfies ok.
func (m *holdMount) acknowledged(ok func(*status.Report) bool) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		rep, err := readReport(m.dir)
		if err != nil {
			return err
		}
		if ok(rep) {
			return nil
		}
		if time.Now().After(deadline) {
			if rep.Hold != nil {
				return fmt.Errorf("its status says held until %s", rep.Hold.Until.Format(time.RFC3339))
			}
			return fmt.Errorf("its status says no hold")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readReport reads and decodes the status of the mount at dir.
func readReport(dir string) (*status.Report, error) {
	data, err := readStatus(dir)
	if err != nil {
		return nil, err
	}
	var rep status.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("status of %s: %w", dir, err)
	}
	return &rep, nil
}

// processOwner is the uid that runs pid, or -1 if it cannot be told (the
// process is in another pid namespace).
func processOwner(pid int) int {
	st, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return -1
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}
