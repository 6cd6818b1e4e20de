package source

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"rsfs/report"
	"rsfs/status"
)

// WriteJSON writes the report as `rsfs inspect --json` prints it.
func (r *Report) WriteJSON(w io.Writer) error {
	return report.JSON(w, r)
}

// WriteText writes the report as `rsfs inspect` prints it: the Source,
// then each set's documents, counts, packages, links and follow plan,
// each problem on its own line, and how many documents could not be read
// and how many deviations were listed.
func (r *Report) WriteText(out io.Writer) error {
	w := report.NewWriter(out)
	fmt.Fprintf(w, "Source %s (discovered at %s)\n", r.Origin, r.Entry)
	writeProblems(w, "  ", r.Failed, r.Warnings)
	for i, s := range r.Sets {
		name := s.CapabilityList
		if name == "" {
			name = "(no Capability List)"
		}
		fmt.Fprintf(w, "\nResource set %d: %s\n", i+1, name)
		for _, d := range s.Documents {
			d.writeText(w)
		}
		s.writeCounts(w)
		s.Follow.writeText(w)
	}
	if failed := r.Unread(); failed > 0 {
		fmt.Fprintf(w, "\n%d document(s) could not be read; the rest is reported above.\n", failed)
	}
	if r.Deviations > 0 {
		fmt.Fprintf(w, "\n%d deviation(s) from ResourceSync 1.1 (Z39.99-2017), each listed above with its clause.\n", r.Deviations)
	}
	return w.Err()
}

// Unread counts the documents the report could not read.
func (r *Report) Unread() int {
	n := len(r.Failed)
	for _, s := range r.Sets {
		for _, d := range s.Documents {
			if d.Error != "" {
				n++
			}
			n += len(d.Failed)
		}
	}
	return n
}

// BadPackages counts the dump packages that could not be opened, or whose
// manifest names a member the package lacks or gives it another length
// (§11.2, §13.2: the manifest describes the package's bitstreams).
func (r *Report) BadPackages() int {
	n := 0
	for _, s := range r.Sets {
		for _, p := range s.Packages {
			if p.Error != "" || p.Matched < p.ManifestEntries {
				n++
			}
		}
	}
	return n
}

func writeProblems(w io.Writer, indent string, failed, warnings []Problem) {
	for _, p := range failed {
		fmt.Fprintf(w, "%sFAILED  %s: %s\n", indent, p.URL, p.Msg)
	}
	for _, p := range warnings {
		fmt.Fprintf(w, "%swarning %s: %s\n", indent, p.URL, p.text())
	}
}

// text is a warning on one line: its line in the document, what it is,
// the clause it departs from and how it was read.
func (p Problem) text() string {
	s := p.Msg
	if p.Line > 0 {
		s = fmt.Sprintf("line %d: %s", p.Line, s)
	}
	if p.Count > 1 {
		s += fmt.Sprintf(" (%d in the document)", p.Count)
	}
	if p.Clause != "" {
		s += " [" + p.Clause + "]"
	}
	if p.Reading != "" {
		s += "; " + p.Reading
	}
	return s
}

func (d DocReport) writeText(w io.Writer) {
	kind := "document"
	if d.Index {
		kind = fmt.Sprintf("index of %d documents", d.Documents)
	}
	if d.Error != "" {
		fmt.Fprintf(w, "  %-22s %s FAILED: %s (%d entries read)\n", d.Capability, d.URL, d.Error, d.Entries)
	} else {
		fmt.Fprintf(w, "  %-22s %s (%s, %d entries)\n", d.Capability, d.URL, kind, d.Entries)
	}
	writeProblems(w, "    ", d.Failed, d.Warnings)
}

func (s SetReport) writeCounts(w io.Writer) {
	if s.NoBaseline {
		fmt.Fprintln(w, "  "+status.NoBaselineText)
	}
	fmt.Fprintf(w, "  resources:     %d (%s", s.Resources, report.ExactSize(s.Bytes))
	if s.NoLength > 0 {
		fmt.Fprintf(w, "; %d without a length", s.NoLength)
	}
	fmt.Fprintln(w, ")")
	if s.DumpPackages > 0 {
		fmt.Fprintf(w, "  dump packages: %d (%s)\n", s.DumpPackages, report.ExactSize(s.DumpBytes))
	}
	for _, p := range s.Packages {
		if p.Error != "" {
			fmt.Fprintf(w, "  package %s: %s\n", p.URL, p.Error)
			continue
		}
		fmt.Fprintf(w, "  package %s: %s, %d members (%s), manifest %d entries, %d matched\n",
			p.URL, report.ExactSize(p.Size), p.Members, methods(p.Methods), p.ManifestEntries, p.Matched)
	}
	if s.Changes > 0 || s.NewestChange != nil {
		fmt.Fprintf(w, "  changes:       %d (newest %s)\n", s.Changes, report.Time(s.NewestChange, "unknown"))
	}
	for _, c := range s.Channels {
		fmt.Fprintf(w, "  notifications: %s via hub %s (topic %s)\n", c.Capability, c.Hub, c.Topic)
	}
	writeLinks(w, s.Links)
}

// writeLinks lists the set's links by relation, each with an example.
func writeLinks(w io.Writer, links map[string]*LinkReport) {
	rels := make([]string, 0, len(links))
	for rel := range links {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	label := "  links:         "
	for _, rel := range rels {
		l := links[rel]
		fmt.Fprintf(w, "%s%d %s (%s), e.g. %s -> %s\n", label, l.Count, rel, l.Attr, l.Example.Resource, l.Example.Href)
		label = "                 "
	}
}

func (p FollowPlan) writeText(w io.Writer) {
	polled := "nothing"
	if len(p.Polled) > 0 {
		polled = strings.Join(p.Polled, ", ")
	}
	fmt.Fprintf(w, "  follow:        polls %s\n", polled)
	fmt.Fprintf(w, "                 from %s\n", report.Time(p.Position, "the start (no time known)"))
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "                 warning: %s\n", warn)
	}
}

// methods is a package's members by compression method: "3 deflate, 1
// store".
func methods(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}
