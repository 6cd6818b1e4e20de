package atomfeed

import (
	"fmt"
	"io"
	"sort"

	"rsfs/report"
)

// WriteJSON writes the report as `rsfs inspect --json` prints it for a
// feed.
func (r *Report) WriteJSON(w io.Writer) error {
	return report.JSON(w, r)
}

// Unread counts the documents of the chain that could not be read.
func (r *Report) Unread() int {
	n := 0
	for _, d := range r.Documents {
		if d.Error != "" {
			n++
		}
	}
	return n
}

// WriteText writes the report as `rsfs inspect` prints it for a feed: each
// document of the chain, then the counts of entries, representations and
// links, the warnings, and how many documents could not be read.
func (r *Report) WriteText(out io.Writer) error {
	w := report.NewWriter(out)
	fmt.Fprintf(w, "Atom-PMH feed %s\n", r.Feed)
	for _, d := range r.Documents {
		d.writeText(w)
	}
	fmt.Fprintf(w, "  documents:       %d", len(r.Documents))
	if !r.Whole {
		fmt.Fprint(w, " (the chain could not be read to its end)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  records:         %d active\n", r.Records)
	fmt.Fprintf(w, "  entries:         %d active, %d historical, %d deletion", r.Active, r.Historical, r.Deletion)
	if r.Other > 0 {
		fmt.Fprintf(w, ", %d of no kind the protocol defines (skipped)", r.Other)
	}
	fmt.Fprintln(w)
	for _, t := range sortedKeys(r.Representations) {
		name := t
		if name == "" {
			name = "(no type)"
		}
		fmt.Fprintf(w, "  representations: %d %s\n", r.Representations[t], name)
	}
	for _, rel := range sortedKeys(r.Links) {
		l := r.Links[rel]
		fmt.Fprintf(w, "  links:           %d %s (%s), e.g. %s -> %s\n", l.Count, rel, l.Attr, l.Example.Record, l.Example.Href)
	}
	fmt.Fprintf(w, "  newest updated:  %s\n", report.Time(r.NewestUpdated, "none"))
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning %s\n", warn)
	}
	if failed := r.Unread(); failed > 0 {
		fmt.Fprintf(w, "\n%d document(s) could not be read; the rest is reported above.\n", failed)
	}
	return w.Err()
}

// writeText is the document's line: its kind, URL, entries and when it
// was updated, or why it could not be read.
func (d DocReport) writeText(w io.Writer) {
	kind := "subscription"
	switch {
	case d.Complete:
		kind = "complete"
	case d.Archive:
		kind = "archive"
	}
	if d.Error != "" {
		fmt.Fprintf(w, "  %-12s %s FAILED: %s (%d entries read)\n", kind, d.URL, d.Error, d.Entries)
		return
	}
	fmt.Fprintf(w, "  %-12s %s (%d entries, updated %s)\n", kind, d.URL, d.Entries, report.Time(d.Updated, "unknown"))
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
