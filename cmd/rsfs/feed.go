package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"rsfs/atomfeed"
	"rsfs/atompmh"
	"rsfs/fetch"
	"rsfs/report"
)

// inspectFeed prints what the Atom-PMH feed discovery found publishes.
func inspectFeed(cmd *cobra.Command, sf *sourceFlags, rawURL string, found *fetch.Document, asJSON, strict bool) error {
	client, err := sf.client(rawURL)
	if err != nil {
		return err
	}
	feed, err := atomfeed.New(found.URL, atomfeed.Options{Client: client, Parse: atompmh.Options{MaxBytes: sf.maxDoc}, Discovered: found})
	if err != nil {
		return err
	}
	rep, err := feed.Inspect(cmd.Context())
	if err != nil {
		return err
	}
	if asJSON {
		if err := report.JSON(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	} else {
		printFeedReport(cmd, rep)
	}
	unread := 0
	for _, d := range rep.Documents {
		if d.Error != "" {
			unread++
		}
	}
	return strictExit(strict, len(rep.Warnings), unread)
}

func printFeedReport(cmd *cobra.Command, rep *atomfeed.Report) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Atom-PMH feed %s\n", rep.Feed)
	failed := 0
	for _, d := range rep.Documents {
		kind := "subscription"
		switch {
		case d.Complete:
			kind = "complete"
		case d.Archive:
			kind = "archive"
		}
		if d.Error != "" {
			failed++
			fmt.Fprintf(w, "  %-12s %s FAILED: %s (%d entries read)\n", kind, d.URL, d.Error, d.Entries)
			continue
		}
		fmt.Fprintf(w, "  %-12s %s (%d entries, updated %s)\n", kind, d.URL, d.Entries, timeOr(d.Updated, "unknown"))
	}
	fmt.Fprintf(w, "  documents:       %d", len(rep.Documents))
	if !rep.Whole {
		fmt.Fprint(w, " (the chain could not be read to its end)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  records:         %d active\n", rep.Records)
	fmt.Fprintf(w, "  entries:         %d active, %d historical, %d deletion", rep.Active, rep.Historical, rep.Deletion)
	if rep.Other > 0 {
		fmt.Fprintf(w, ", %d of no kind the protocol defines (skipped)", rep.Other)
	}
	fmt.Fprintln(w)
	types := make([]string, 0, len(rep.Representations))
	for t := range rep.Representations {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		name := t
		if name == "" {
			name = "(no type)"
		}
		fmt.Fprintf(w, "  representations: %d %s\n", rep.Representations[t], name)
	}
	rels := make([]string, 0, len(rep.Links))
	for rel := range rep.Links {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		l := rep.Links[rel]
		fmt.Fprintf(w, "  links:           %d %s (%s), e.g. %s -> %s\n", l.Count, rel, l.Attr, l.Example.Record, l.Example.Href)
	}
	fmt.Fprintf(w, "  newest updated:  %s\n", timeOr(rep.NewestUpdated, "none"))
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "  warning %s\n", warn)
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d document(s) could not be read; the rest is reported above.\n", failed)
	}
}
