package statedir

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"rsfs/report"
)

// WriteTable writes the table of `rsfs cache list`: each state directory
// under base, most recently used first, then their number and total size.
func WriteTable(w io.Writer, base string, dirs []Info, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE DIR\tSIZE\tLAST USED\tMOUNTED\tSOURCE")
	var total int64
	for i := len(dirs) - 1; i >= 0; i-- { // most recently used first
		d := dirs[i]
		total += d.Size
		mounted := "no"
		if d.Mounted {
			mounted = "on " + OrDash(d.MountPoint)
			if d.PID > 0 {
				mounted += fmt.Sprintf(" (pid %d)", d.PID)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, report.Size(d.Size), Ago(now, d.LastUsed), mounted, OrDash(d.URL))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d state directories, %s, in %s\n", len(dirs), report.Size(total), base)
}

// OrDash is s, or "-" for nothing.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Ago says how long before now t was, to the unit that matters.
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// WritePruned writes what Prune removed under base (or would remove, for
// a dry run) as `rsfs cache prune` says it: one line per state directory,
// then the space freed and the total left.
func WritePruned(w io.Writer, base string, pruned []Info, total int64, opts PruneOptions) {
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	var freed int64
	for _, d := range pruned {
		freed += d.Size
		fmt.Fprintf(w, "%s %s  %s  %s, last used %s\n", verb, d.Name, OrDash(d.URL), report.Size(d.Size), Ago(opts.Now, d.LastUsed))
	}
	fmt.Fprintf(w, "%s %d state directories (%s); %s left in %s\n", verb, len(pruned), report.Size(freed), report.Size(total), base)
}
