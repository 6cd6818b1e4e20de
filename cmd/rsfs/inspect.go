package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rsfs/changes"
	"rsfs/discover"
	"rsfs/protocol"
	"rsfs/source"
)

func inspectCmd() *cobra.Command {
	var sf sourceFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect URL",
		Short: "Show what a ResourceSync Source publishes",
		Long: `inspect discovers the Source at URL (a site, or the URL of any ResourceSync
document) and prints, for each resource set, its Capability List, the
documents of each capability, the number of resources and their total size,
the dump packages, the Change List, the notification channels and how a
mount would follow the set. A document that cannot be read is reported on
its own line (FAILED) and the others are read; inspect exits non-zero only
when nothing could be discovered.`,
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
				return inspectFeed(cmd, &sf, args[0], found.Feed, asJSON)
			}
			rep, err := changes.Inspect(cmd.Context(), found.Source)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printReport(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func printReport(w io.Writer, rep *source.Report) {
	fmt.Fprintf(w, "Source %s (discovered at %s)\n", rep.Origin, rep.Entry)
	failed := len(rep.Failed)
	printProblems(w, "  ", rep.Failed, rep.Warnings)
	for i, s := range rep.Sets {
		name := s.CapabilityList
		if name == "" {
			name = "(no Capability List)"
		}
		fmt.Fprintf(w, "\nResource set %d: %s\n", i+1, name)
		for _, d := range s.Documents {
			printDoc(w, d)
			if d.Error != "" {
				failed++
			}
			failed += len(d.Failed)
		}
		printCounts(w, s)
		printPlan(w, s.Follow)
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d document(s) could not be read; the rest is reported above.\n", failed)
	}
}

func printProblems(w io.Writer, indent string, failed, warnings []source.Problem) {
	for _, p := range failed {
		fmt.Fprintf(w, "%sFAILED  %s: %s\n", indent, p.URL, p.Msg)
	}
	for _, p := range warnings {
		fmt.Fprintf(w, "%swarning %s: %s\n", indent, p.URL, p.Msg)
	}
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
	fmt.Fprintf(w, "  resources:     %d (%s", s.Resources, humanBytes(s.Bytes))
	if s.NoLength > 0 {
		fmt.Fprintf(w, "; %d without a length", s.NoLength)
	}
	fmt.Fprintln(w, ")")
	if s.DumpPackages > 0 {
		fmt.Fprintf(w, "  dump packages: %d (%s)\n", s.DumpPackages, humanBytes(s.DumpBytes))
	}
	for _, p := range s.Packages {
		if p.Error != "" {
			fmt.Fprintf(w, "  package %s: %s\n", p.URL, p.Error)
			continue
		}
		fmt.Fprintf(w, "  package %s: %s, %d members (%s), manifest %d entries, %d matched\n",
			p.URL, humanBytes(p.Size), p.Members, methods(p.Methods), p.ManifestEntries, p.Matched)
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

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%d bytes, %.1f %ciB", n, float64(n)/float64(div), "KMGTPE"[exp])
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
