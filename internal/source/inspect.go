package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"rsfs/internal/resourcesync"
)

// Report is what Inspect found, per resource set.
type Report struct {
	Origin string      `json:"origin"`
	Entry  string      `json:"entry"`
	Sets   []SetReport `json:"sets"`
}

// SetReport describes one resource set.
type SetReport struct {
	CapabilityList string      `json:"capability_list"`
	Documents      []DocReport `json:"documents"`
	Resources      int64       `json:"resources"`
	Bytes          int64       `json:"bytes"`
	NoLength       int64       `json:"resources_without_length"`
	DumpPackages   int64       `json:"dump_packages"`
	DumpBytes      int64       `json:"dump_bytes"`
	Changes        int64       `json:"changes"`
	NewestChange   *time.Time  `json:"newest_change,omitempty"`
	Channels       []Channel   `json:"channels,omitempty"`
}

// DocReport describes one document a Capability List names.
type DocReport struct {
	Capability resourcesync.Capability `json:"capability"`
	URL        string                  `json:"url"`
	Index      bool                    `json:"index"`
	Documents  int                     `json:"documents"` // 1, or the documents an index names
	Entries    int64                   `json:"entries"`
}

// Inspect reads every document of every set and counts what they hold.
func (s *Source) Inspect(ctx context.Context) (*Report, error) {
	rep := &Report{Origin: s.Origin, Entry: s.Entry}
	for _, set := range s.Sets {
		sr := SetReport{CapabilityList: set.URL, Channels: set.Hubs}
		caps := make([]string, 0, len(set.Docs))
		for c := range set.Docs {
			caps = append(caps, string(c))
		}
		sort.Strings(caps)
		for _, c := range caps {
			if isChannel(resourcesync.Capability(c)) {
				continue // a notification topic, not a document
			}
			for _, u := range set.Docs[resourcesync.Capability(c)] {
				dr, err := s.inspectDoc(ctx, resourcesync.Capability(c), u, &sr)
				if err != nil {
					return nil, err
				}
				sr.Documents = append(sr.Documents, *dr)
			}
		}
		rep.Sets = append(rep.Sets, sr)
	}
	return rep, nil
}

func (s *Source) inspectDoc(ctx context.Context, c resourcesync.Capability, u string, sr *SetReport) (*DocReport, error) {
	dr := &DocReport{Capability: c, URL: u, Documents: 1}
	children, err := s.countDoc(ctx, c, u, dr, sr)
	if err != nil {
		return nil, err
	}
	if children != nil {
		dr.Index = true
		dr.Documents = len(children)
		for _, child := range children {
			if _, err := s.countDoc(ctx, c, child, dr, sr); err != nil {
				return nil, err
			}
		}
	}
	return dr, nil
}

// countDoc streams one document. For an index it returns the children's
// URLs; otherwise it adds the entries to the reports.
func (s *Source) countDoc(ctx context.Context, c resourcesync.Capability, u string, dr *DocReport, sr *SetReport) ([]string, error) {
	resp, err := s.opts.Client.Get(ctx, u, nil)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	defer resp.Body.Close()
	r, err := resourcesync.NewReader(resp.Body, resp.URL, s.opts.Parse)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	h, err := r.Header()
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	defer s.warnReader(r)
	var children []string
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("inspect: %w", err)
		}
		if h.Root == resourcesync.SitemapIndex {
			children = append(children, e.Loc)
			continue
		}
		dr.Entries++
		count(c, e, sr)
	}
	if h.Root == resourcesync.SitemapIndex && children == nil {
		children = []string{}
	}
	return children, nil
}

func count(c resourcesync.Capability, e *resourcesync.Entry, sr *SetReport) {
	switch c {
	case resourcesync.CapResourceList:
		sr.Resources++
		if e.MD.Length == resourcesync.NoLength {
			sr.NoLength++
		} else {
			sr.Bytes += e.MD.Length
		}
	case resourcesync.CapResourceDump, resourcesync.CapChangeDump:
		sr.DumpPackages++
		if e.MD.Length > 0 {
			sr.DumpBytes += e.MD.Length
		}
	case resourcesync.CapChangeList:
		sr.Changes++
		t := e.MD.Datetime
		if t.IsZero() {
			t = e.Lastmod
		}
		if !t.IsZero() && (sr.NewestChange == nil || t.After(*sr.NewestChange)) {
			sr.NewestChange = &t
		}
	}
}

func isChannel(c resourcesync.Capability) bool {
	return c == resourcesync.CapChangeNotification || c == resourcesync.CapFrameworkNotification
}
