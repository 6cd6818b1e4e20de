package audit

import (
	"fmt"
	"io"

	"rsfs/report"
)

// Examples is how many paths of each kind the text report names.
const Examples = 10

// WriteJSON writes the report as `rsfs audit --json` prints it.
func (r *Report) WriteJSON(w io.Writer) error {
	return report.JSON(w, r)
}

// WriteText writes the report as `rsfs audit` prints it: the Source and
// the mount (or snapshot) compared, the drift, naming up to Examples paths
// of each kind, and the files whose bytes were checked.
func (r *Report) WriteText(out io.Writer) error {
	w := report.NewWriter(out)
	fmt.Fprintf(w, "Source:   %s (origin %s): %d resources now\n", r.Source, r.Origin, r.Truth)
	if r.Mount != "" {
		fmt.Fprintf(w, "Mount:    %s: %d files\n", r.Mount, r.Files)
	} else {
		fmt.Fprintf(w, "Snapshot: %s: %d files\n", r.Snapshot, r.Files)
	}
	if n := len(r.Created) + len(r.Updated) + len(r.Deleted); n == 0 {
		fmt.Fprintln(w, "Drift:    none")
	} else {
		fmt.Fprintf(w, "Drift:    %d created, %d deleted, %d updated\n", len(r.Created), len(r.Deleted), len(r.Updated))
		writeExamples(w, "created", r.Created)
		writeExamples(w, "deleted", r.Deleted)
		writeExamples(w, "updated", r.Updated)
	}
	if r.BytesChecked > 0 {
		fmt.Fprintf(w, "Bytes:    %d files read, %d wrong\n", r.BytesChecked, len(r.WrongBytes))
		for _, wb := range r.WrongBytes {
			fmt.Fprintf(w, "  wrong bytes %s: %s\n", wb.Path, wb.Reason)
		}
	}
	return w.Err()
}

// writeExamples names up to Examples of paths, a line each, and says how
// many more there are.
func writeExamples(w io.Writer, kind string, paths []string) {
	for i, p := range paths {
		if i == Examples {
			fmt.Fprintf(w, "  %-8s ... and %d more\n", kind, len(paths)-i)
			return
		}
		fmt.Fprintf(w, "  %-8s %s\n", kind, p)
	}
}
