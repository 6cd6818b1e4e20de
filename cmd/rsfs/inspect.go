package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rsfs/changes"
	"rsfs/discover"
	"rsfs/protocol"
	"rsfs/report"
	"rsfs/source"
	"rsfs/status"
)

func inspectCmd() *cobra.Command {
	var sf sourceFlags
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "inspect URL",
		Short: "Show what a ResourceSync Source publishes, and where it departs from the standard",
		Long: `inspect discovers the Source at URL (a site, or the URL of any ResourceSync
document) and prints, for each resource set, its Capability List, the
documents of each capability, the number of resources and their total size,
the dump packages, the Change List, the notification channels and how a
mount would follow the set. A document that cannot be read is reported on
its own line (FAILED) and the others are read; inspect exits non-zero only
when nothing could be discovered.

inspect is also a validator: every deviation from ResourceSync 1.1
(ANSI/NISO Z39.99-2017) that rsfs tolerates is listed once per document,
as a warning line that gives the document and line, the deviation, the
clause it departs from in [brackets] and how rsfs read it; these are the
warnings a mount logs. With --strict, inspect exits 1 when it lists any
deviation, a document or dump package could not be read or a manifest
names a member its package lacks, and 0 when there is none: a
publisher's CI can run 'rsfs inspect --strict URL' (or with --json, whose
"deviations" counts them).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sf.validate(); err != nil {
				return err
			}
			client, err := sf.client(args[0])
			if err != nil {
				return err
			}
			opts := sf.sourceOptions(client)
			opts.Partial = true
			found, err := discover.At(cmd.Context(), args[0], opts)
			if err != nil {
				return err
			}
			if found.Protocol() == protocol.AtomPMH {
				return inspectFeed(cmd, &sf, args[0], found.Feed, asJSON, strict)
			}
			rep, err := changes.Inspect(cmd.Context(), found.Source)
			if err != nil {
				return err
			}
			if asJSON {
				if err := report.JSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				printReport(cmd.OutOrStdout(), rep)
			}
			return strictExit(strict, rep.Deviations, unread(rep)+badPackages(rep))
		},
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 when any deviation from the standard is listed, or a document or dump package could not be read")
	return cmd
}

// strictExit is inspect's end: with --strict, exit status 1 (the report
// has said why) when it listed deviations or documents it could not read.
func strictExit(strict bool, deviations, unread int) error {
	if strict && deviations+unread > 0 {
		return exitWith(exitFailure, nil)
	}
	return nil
}

// badPackages counts the dump packages that could not be opened, or whose
// manifest names a member the package lacks or gives it another length
// (§11.2, §13.2: the manifest describes the package's bitstreams).
func badPackages(rep *source.Report) int {
	n := 0
	for _, s := range rep.Sets {
		for _, p := range s.Packages {
			if p.Error != "" || p.Matched < p.ManifestEntries {
				n++
			}
		}
	}
	return n
}

// unread counts the documents the report could not read.
func unread(rep *source.Report) int {
	n := len(rep.Failed)
	for _, s := range rep.Sets {
		for _, d := range s.Documents {
			if d.Error != "" {
				n++
			}
			n += len(d.Failed)
		}
	}
	return n
}

func printReport(w io.Writer, rep *source.Report) {
	fmt.Fprintf(w, "Source %s (discovered at %s)\n", rep.Origin, rep.Entry)
	printProblems(w, "  ", rep.Failed, rep.Warnings)
	for i, s := range rep.Sets {
		name := s.CapabilityList
		if name == "" {
			name = "(no Capability List)"
		}
		fmt.Fprintf(w, "\nResource set %d: %s\n", i+1, name)
		for _, d := range s.Documents {
			printDoc(w, d)
		}
		printCounts(w, s)
		printPlan(w, s.Follow)
	}
	if failed := unread(rep); failed > 0 {
		fmt.Fprintf(w, "\n%d document(s) could not be read; the rest is reported above.\n", failed)
	}
	if rep.Deviations > 0 {
		fmt.Fprintf(w, "\n%d deviation(s) from ResourceSync 1.1 (Z39.99-2017), each listed above with its clause.\n", rep.Deviations)
	}
}

func printProblems(w io.Writer, indent string, failed, warnings []source.Problem) {
	for _, p := range failed {
		fmt.Fprintf(w, "%sFAILED  %s: %s\n", indent, p.URL, p.Msg)
	}
	for _, p := range warnings {
		fmt.Fprintf(w, "%swarning %s: %s\n", indent, p.URL, problemText(p))
	}
}

// problemText is a warning on one line: its line in the document, what
// it is, the clause it departs from and how it was read.
func problemText(p source.Problem) string {
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

func printDoc(w io.Writer, d source.DocReport) {
	kind := "document"
	if d.Index {
		kind = fmt.Sprintf("index of %d documents", d.Documents)
	}
	if d.Error != "" {
		fmt.Fprintf(w, "  %-22s %s FAILED: %s (%d entries read)\n", d.Capability, d.URL, d.Error, d.Entries)
	} else {
		fmt.Fprintf(w, "  %-22s %s (%s, %d entries)\n", d.Capability, d.URL, kind, d.Entries)
	}
	printProblems(w, "    ", d.Failed, d.Warnings)
}

func printCounts(w io.Writer, s source.SetReport) {
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
		fmt.Fprintf(w, "  changes:       %d (newest %s)\n", s.Changes, timeOr(s.NewestChange, "unknown"))
	}
	for _, c := range s.Channels {
		fmt.Fprintf(w, "  notifications: %s via hub %s (topic %s)\n", c.Capability, c.Hub, c.Topic)
	}
	printLinks(w, s.Links)
}

// printLinks lists the set's links by relation, each with an example.
func printLinks(w io.Writer, links map[string]*source.LinkReport) {
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

func printPlan(w io.Writer, p source.FollowPlan) {
	polled := "nothing"
	if len(p.Polled) > 0 {
		polled = strings.Join(p.Polled, ", ")
	}
	fmt.Fprintf(w, "  follow:        polls %s\n", polled)
	fmt.Fprintf(w, "                 from %s\n", timeOr(p.Position, "the start (no time known)"))
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "                 warning: %s\n", warn)
	}
}

func timeOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339Nano)
}

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
