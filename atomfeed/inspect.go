package atomfeed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"rsfs/atompmh"
	"rsfs/catalog"
)

// Report is what inspect says about a feed: the documents of its chain,
// its entries by kind, the representations of its active records by media
// type, and the newest atom:updated.
type Report struct {
	Feed      string      `json:"feed"`
	Documents []DocReport `json:"documents"`
	// Whole: the chain was read to its end (or to a complete document).
	Whole      bool `json:"whole"`
	Complete   bool `json:"complete"`
	Records    int  `json:"records"` // active records
	Active     int  `json:"active_entries"`
	Historical int  `json:"historical_entries"`
	Deletion   int  `json:"deletion_entries"`
	Other      int  `json:"other_entries,omitempty"`
	// Representations counts the active records' alternate links by
	// media type ("" when the link gives none).
	Representations map[string]int `json:"representations"`
	// Links counts the active records' links other than alternate by
	// relation, as published (a registered one without the IANA prefix).
	Links         map[string]*LinkReport `json:"links,omitempty"`
	NewestUpdated *time.Time             `json:"newest_updated,omitempty"`
	Warnings      []string               `json:"warnings,omitempty"`
}

// LinkReport counts the links of one relation, with an example.
type LinkReport struct {
	Count int `json:"count"`
	// Attr is the extended attribute a mount shows them as
	// (user.atompmh.link.<short rel>).
	Attr    string `json:"xattr"`
	Example struct {
		Record string `json:"record"`
		Href   string `json:"href"`
	} `json:"example"`
}

// DocReport is one document of the chain.
type DocReport struct {
	URL      string     `json:"url"`
	Updated  *time.Time `json:"updated,omitempty"`
	Entries  int        `json:"entries"`
	Archive  bool       `json:"archive,omitempty"`
	Complete bool       `json:"complete,omitempty"`
	Error    string     `json:"error,omitempty"`
}

// Inspect harvests the whole feed, in memory, and reports on it. A
// document that cannot be read is reported (its Error) and ends the walk,
// as in a harvest; Inspect fails only when the subscription document
// cannot be read.
func (f *Feed) Inspect(ctx context.Context) (*Report, error) {
	rep := &Report{Feed: f.URL, Representations: map[string]int{}}
	h := f.harvester(nil)
	fetchDoc := h.Fetch
	h.Fetch = func(ctx context.Context, url string, _ bool) (io.ReadCloser, error) {
		rc, err := fetchDoc(ctx, url, false)
		if err != nil {
			rep.Documents = append(rep.Documents, DocReport{URL: url, Error: err.Error()})
			return nil, err
		}
		defer rc.Close()
		body, err := io.ReadAll(rc)
		if err != nil {
			rep.Documents = append(rep.Documents, DocReport{URL: url, Error: err.Error()})
			return nil, fmt.Errorf("read %s: %w", url, err)
		}
		rep.Documents = append(rep.Documents, rep.describe(url, body, f.opts.Parse))
		return io.NopCloser(bytes.NewReader(body)), nil
	}
	st := atompmh.NewState()
	res, err := h.Harvest(ctx, f.URL, st)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", f.URL, err)
	}
	rep.Whole, rep.Complete = res.Whole, res.Complete
	rep.Active, rep.Historical, rep.Deletion, rep.Other = res.Counts.Active, res.Counts.Historical, res.Counts.Deletion, res.Counts.Other
	rep.Records = len(st.Pool)
	ids := slices.Sorted(maps.Keys(st.Pool))
	for _, id := range ids {
		e := st.Pool[id]
		for _, l := range e.Links {
			rep.Representations[l.Type]++
		}
		for _, l := range e.Related {
			if rep.Links == nil {
				rep.Links = map[string]*LinkReport{}
			}
			lr := rep.Links[l.Rel]
			if lr == nil {
				lr = &LinkReport{Attr: "user." + Protocol + ".link." + catalog.RelName(l.Rel)}
				lr.Example.Record, lr.Example.Href = id, l.Href
				rep.Links[l.Rel] = lr
			}
			lr.Count++
		}
	}
	for _, w := range res.Warnings {
		rep.Warnings = append(rep.Warnings, w.String())
	}
	return rep, nil
}

// describe parses one document for its report and notes its newest entry.
func (rep *Report) describe(url string, body []byte, opts atompmh.Options) DocReport {
	d := DocReport{URL: url}
	doc, err := atompmh.Parse(bytes.NewReader(body), url, opts)
	if err != nil {
		d.Error = err.Error()
	}
	if doc == nil {
		return d
	}
	d.Entries, d.Archive, d.Complete = len(doc.Entries), doc.Archive, doc.Complete
	if !doc.Updated.IsZero() {
		u := doc.Updated
		d.Updated = &u
	}
	for _, e := range doc.Entries {
		if rep.NewestUpdated == nil || e.Updated.After(*rep.NewestUpdated) {
			u := e.Updated
			rep.NewestUpdated = &u
		}
	}
	return d
}
