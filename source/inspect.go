package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"rsfs/resourcesync"
)

// Report is what Inspect found, per resource set.
type Report struct {
	Origin string      `json:"origin"`
	Entry  string      `json:"entry"`
	Sets   []SetReport `json:"sets"`
}

// SetReport describes one resource set.
type SetReport struct {
	CapabilityList string          `json:"capability_list"`
	Documents      []DocReport     `json:"documents"`
	Resources      int64           `json:"resources"`
	Bytes          int64           `json:"bytes"`
	NoLength       int64           `json:"resources_without_length"`
	DumpPackages   int64           `json:"dump_packages"`
	DumpBytes      int64           `json:"dump_bytes"`
	Changes        int64           `json:"changes"`
	NewestChange   *time.Time      `json:"newest_change,omitempty"`
	Channels       []Channel       `json:"channels,omitempty"`
	Packages       []PackageReport `json:"packages,omitempty"`
}

// PackageReport describes one dump package.
type PackageReport struct {
	URL             string         `json:"url"`
	Size            int64          `json:"size"`
	Members         int            `json:"members"`
	ManifestEntries int            `json:"manifest_entries"`
	Matched         int            `json:"matched"` // manifest entries whose member is in the package, with the manifest's length
	Methods         map[string]int `json:"methods"` // members by compression method
	Error           string         `json:"error,omitempty"`
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
	if c == resourcesync.CapResourceDump || c == resourcesync.CapChangeDump {
		defer func() {
			pkgs, err := s.dumpPackages(ctx, u, 0)
			if err != nil {
				sr.Packages = append(sr.Packages, PackageReport{URL: u, Error: err.Error()})
				return
			}
			for _, p := range pkgs {
				sr.Packages = append(sr.Packages, s.inspectPackage(ctx, p))
			}
		}()
	}
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

// inspectPackage opens a dump package and checks its manifest against its
// members.
func (s *Source) inspectPackage(ctx context.Context, url string) PackageReport {
	rep := PackageReport{URL: url, Methods: map[string]int{}}
	pkg, err := s.pkgs.open(ctx, url)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Size, rep.Members = pkg.Size, len(pkg.Members)
	for _, m := range pkg.Members {
		rep.Methods[methodName(m.Method)]++
	}
	man, err := pkg.Manifest(ctx)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.ManifestEntries = len(man.Entries)
	for _, e := range man.Entries {
		if m, ok := pkg.Lookup(e.MD.Path); ok && (e.MD.Length < 0 || e.MD.Length == m.Size) {
			rep.Matched++
		}
	}
	return rep
}

func methodName(m uint16) string {
	switch m {
	case 0:
		return "stored"
	case 8:
		return "deflate"
	case 93:
		return "zstd"
	}
	return fmt.Sprintf("method %d", m)
}
