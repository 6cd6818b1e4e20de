package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"rsfs/fs"
	"rsfs/recent"
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
			data, err := readStatus(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				var out bytes.Buffer
				if err := json.Indent(&out, data, "", "  "); err != nil {
					return fmt.Errorf("status of %s: %w", args[0], err)
				}
				out.WriteByte('\n')
				_, err := cmd.OutOrStdout().Write(out.Bytes())
				return err
			}
			var rep statusReport
			if err := json.Unmarshal(data, &rep); err != nil {
				return fmt.Errorf("status of %s: %w", args[0], err)
			}
			printStatus(cmd.OutOrStdout(), &rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// readStatus reads the mount's status attribute.
func readStatus(dir string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1<<16)
	for {
		n, err := syscall.Getxattr(abs, fs.XattrStatus, buf)
		switch {
		case err == nil:
			return buf[:n], nil
		case errors.Is(err, syscall.ERANGE) && len(buf) < 1<<24:
			buf = make([]byte, 4*len(buf))
		case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.ENOTSUP):
			return nil, fmt.Errorf("%s is not the root of an rsfs mount", abs)
		case errors.Is(err, syscall.ENOTCONN):
			return nil, fmt.Errorf("%s: the rsfs serving it is gone (stale mount: umount it)", abs)
		default:
			return nil, fmt.Errorf("status of %s: %w", abs, err)
		}
	}
}

func printStatus(w io.Writer, r *statusReport) {
	ago := func(t time.Time) string { return r.Now.Sub(t).Round(time.Second).String() }
	fmt.Fprintf(w, "Source:     %s (origin %s)\n", r.Source, r.Origin)
	fmt.Fprintf(w, "Mount:      %s, pid %d, up %s, %d resources\n", r.Dir, r.PID, ago(r.Started), r.Resources)
	if r.PollInterval == "0s" {
		fmt.Fprintln(w, "Following:  off (--poll-interval 0)")
	} else {
		fmt.Fprintf(w, "Following:  every %s: %d polls (%d failed), %d changes applied, %d reloads\n",
			r.PollInterval, r.Polls.Count, r.Polls.Failures, r.Polls.Applied, r.Polls.Reloads)
	}
	kind := "set"
	if r.Protocol == "atompmh" {
		kind = "feed" // its position is the harvest mark
	}
	for _, s := range r.Sets {
		fmt.Fprintf(w, "  %s %s: %d resources\n    position %s, newest change %s, behind %s\n", kind, s.Set, s.Resources,
			s.Position.Format(time.RFC3339), s.NewestChange.Format(time.RFC3339),
			(time.Duration(s.BehindSeconds * float64(time.Second))).String())
	}
	if r.Polls.Last != nil {
		fmt.Fprintf(w, "Last poll:  %s (%s ago), took %s: %s\n", r.Polls.Last.Format(time.RFC3339), ago(*r.Polls.Last),
			time.Duration(r.Polls.LastTook*float64(time.Second)).Round(time.Millisecond), r.Polls.Result)
	} else {
		fmt.Fprintln(w, "Last poll:  none yet")
	}
	if r.Polls.Next != nil {
		fmt.Fprintf(w, "Next poll:  %s (in %s)\n", r.Polls.Next.Format(time.RFC3339), r.Polls.Next.Sub(r.Now).Round(time.Second))
	}
	fmt.Fprintf(w, "Pushed:     %d notifications\n", r.Pushed)
	if r.Hold != nil {
		fmt.Fprintf(w, "Hold:       changes held back until %s\n", r.Hold.Until.Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "Hold:       none")
	}
	printTier(w, "Cache:      memory", r.Cache.Memory)
	if r.Cache.Disk != nil {
		printTier(w, "            disk", *r.Cache.Disk)
	} else {
		fmt.Fprintln(w, "            disk: none (--cache-dir none)")
	}
	fmt.Fprintln(w, "Fetched:")
	for _, o := range r.Fetched {
		fmt.Fprintf(w, "  %s: %d requests, %s\n", o.Origin, o.Requests, formatSize(o.Bytes))
	}
	printFailures(w, "Verification failures", r.Verification)
	printFailures(w, "Read errors", r.ReadErrors)
}

func printTier(w io.Writer, name string, t tierReport) {
	fmt.Fprintf(w, "%s %s of %s in %d blocks, hit ratio %.2f (%d of %d)\n",
		name, formatSize(t.Bytes), formatSize(t.MaxBytes), t.Blocks, t.HitRatio, t.Hits, t.Lookups)
}

func printFailures(w io.Writer, name string, s recent.Summary) {
	more := ""
	if s.Capped {
		more = "+"
	}
	fmt.Fprintf(w, "%s: %d%s in the last hour (%d in all)\n", name, s.InWindow, more, s.Total)
	for _, e := range s.Latest {
		fmt.Fprintf(w, "  %s %s\n", e.Time.UTC().Format(time.RFC3339), e.Reason)
	}
}

// formatSize prints n bytes in the largest binary unit that keeps it at
// least 1.
func formatSize(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}
