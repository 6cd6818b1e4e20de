package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/zipindex"
)

// Report is what Inspect found, per resource set, and what it could not
// read, per document.
type Report struct {
	Origin string      `json:"origin"`
	Entry  string      `json:"entry"`
	Sets   []SetReport `json:"sets"`
	// Failed are the documents discovery could not read; Warnings what it
	// tolerated (non-standard names, links it could not follow).
	Failed   []Problem `json:"failed,omitempty"`
	Warnings []Problem `json:"warnings,omitempty"`
	// Deviations counts the deviations from the standard among the
	// warnings, here and in every document's (see Settle).
	Deviations int `json:"deviations"`
}

// Settle drops from the report's own warnings those a set's document
// repeats (a document discovery read the start of and Inspect read
// whole, counting more of it), so that each deviation is listed once,
// and counts the deviations. Call it once the documents' reports are
// filled in.
func (r *Report) Settle() {
	uncounted := func(p Problem) Problem { p.Count = 0; return p }
	inDocs := map[Problem]bool{}
	n := 0
	for _, s := range r.Sets {
		for _, d := range s.Documents {
			for _, w := range d.Warnings {
				inDocs[uncounted(w)] = true
				if w.Deviation() {
					n++
				}
			}
		}
	}
	var own []Problem
	for _, w := range r.Warnings {
		if inDocs[uncounted(w)] {
			continue
		}
		own = append(own, w)
		if w.Deviation() {
			n++
		}
	}
	r.Warnings, r.Deviations = own, n
}

// SetReport describes one resource set.
type SetReport struct {
	CapabilityList string      `json:"capability_list"`
	Documents      []DocReport `json:"documents"`
	Resources      int64       `json:"resources"`
	Bytes          int64       `json:"bytes"`
	NoLength       int64       `json:"resources_without_length"`
	// NoBaseline: the set publishes no Resource List nor Resource Dump,
	// only changes: a mount's tree holds only what they name.
	NoBaseline   bool            `json:"no_baseline"`
	DumpPackages int64           `json:"dump_packages"`
	DumpBytes    int64           `json:"dump_bytes"`
	Changes      int64           `json:"changes"`
	NewestChange *time.Time      `json:"newest_change,omitempty"` // filled with Follow (changes.Inspect)
	ListedAt     *time.Time      `json:"listed_at,omitempty"`     // the oldest time the Resource Lists speak for
	Channels     []Channel       `json:"channels,omitempty"`
	Packages     []PackageReport `json:"packages,omitempty"`
	// Links counts the rs:ln links of the set's resources by relation, as
	// published, in its Resource Lists, Change Lists and dump manifests.
	Links  map[string]*LinkReport `json:"links,omitempty"`
	Follow FollowPlan             `json:"follow"`
}

// LinkReport counts the links of one relation, with the first met.
type LinkReport struct {
	Count int64 `json:"count"`
	// Attr is the extended attribute a mount shows them as
	// (user.resourcesync.link.<short rel>).
	Attr    string `json:"xattr"`
	Example struct {
		Resource string `json:"resource"`
		Href     string `json:"href"`
	} `json:"example"`
}

// noteLinks counts e's links.
func (sr *SetReport) noteLinks(e *resourcesync.Entry) {
	for _, l := range e.Links {
		if l.Href == "" || l.Rel == "" {
			continue
		}
		if sr.Links == nil {
			sr.Links = map[string]*LinkReport{}
		}
		lr := sr.Links[l.Rel]
		if lr == nil {
			lr = &LinkReport{Attr: "user.resourcesync.link." + catalog.RelName(l.Rel)}
			lr.Example.Resource, lr.Example.Href = e.Loc, l.Href
			sr.Links[l.Rel] = lr
		}
		lr.Count++
	}
}

// FollowPlan is how a mount would follow a set's changes. Inspect leaves
// it empty: package changes works it out with the follower's own engine
// (changes.Inspect, which cmd/rsfs's inspect calls), since source cannot
// follow.
type FollowPlan struct {
	// Polled are the documents each poll reads once caught up: the Change
	// Lists and Change Dumps the Capability List names, and of an index
	// (to MaxDepth) the children its entries do not close (until) before
	// the position.
	Polled []string `json:"polled"`
	// Position is where following stands once caught up: past the newest
	// change the change documents list, dated as the follower dates them
	// (changes dated more than a day ahead aside), or the Resource Lists'
	// time while a document cannot be read.
	Position *time.Time `json:"position,omitempty"`
	// Warnings say what would keep following from being exact.
	Warnings []string `json:"warnings,omitempty"`
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
	Entries    int64                   `json:"entries"`   // entries read (of those that could be read)
	// Error says why the document could not be read (whole, or past some
	// entries); Failed lists the children of an index that could not be.
	Error    string    `json:"error,omitempty"`
	Failed   []Problem `json:"failed,omitempty"`
	Warnings []Problem `json:"warnings,omitempty"` // what the parser tolerated, per document
}

// Inspect reads every document of every set that is source's (Resource
// Lists, Resource Dumps and their packages) and counts what they hold. The
// change documents (Change Lists, Change Dumps, their indexes and
// packages) are named, each with an empty report, but not read: package
// changes reads them once, with the follower's own engine, and fills
// their reports in (changes.Inspect). A document that cannot be read is
// reported and the others are read; the error is only the context's.
func (s *Source) Inspect(ctx context.Context) (*Report, error) {
	rep := &Report{Origin: s.Origin, Entry: s.Entry, Failed: s.Failed, Warnings: s.Warnings}
	lists := map[string]bool{}
	for _, set := range s.Sets() {
		sr := SetReport{CapabilityList: set.URL, Channels: s.Hubs(set), NoBaseline: s.NoBaseline(set)}
		docs := s.AllDocs(set)
		in := &inspection{lists: lists}
		caps := make([]string, 0, len(docs))
		for c := range docs {
			caps = append(caps, string(c))
		}
		sort.Strings(caps)
		for _, c := range caps {
			if isChannel(resourcesync.Capability(c)) {
				continue // a notification topic, not a document
			}
			for _, u := range docs[resourcesync.Capability(c)] {
				if IsChangeDoc(resourcesync.Capability(c)) {
					sr.Documents = append(sr.Documents, DocReport{Capability: resourcesync.Capability(c), URL: u, Documents: 1})
					continue
				}
				sr.Documents = append(sr.Documents, *s.inspectDoc(ctx, resourcesync.Capability(c), u, &sr, in))
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !in.listedAt.IsZero() {
			t := in.listedAt
			sr.ListedAt = &t
		}
		rep.Sets = append(rep.Sets, sr)
	}
	return rep, nil
}

// inspection is what a set's documents say about following it: the
// oldest time its Resource Lists speak for.
type inspection struct {
	listedAt time.Time
	lists    map[string]bool // the Resource Lists walked, in every set, so each is counted once, as a load loads it once
}

func (s *Source) inspectDoc(ctx context.Context, c resourcesync.Capability, u string, sr *SetReport, in *inspection) *DocReport {
	dr := &DocReport{Capability: c, URL: u, Documents: 1}
	if c == resourcesync.CapResourceDump {
		s.inspectResourceDump(ctx, u, dr, sr)
		return dr
	}
	s.inspectResourceList(ctx, c, u, dr, sr, in)
	return dr
}

// inspectResourceList reads the Resource List (or index) u and the
// documents it names as a load does (indexWalk, to MaxDepth), one at a
// time, each once in the whole inspection (a list another index named
// before counts under that one), and counts what each holds. u's own failure is the
// report's Error; each child's is listed in Failed.
func (s *Source) inspectResourceList(ctx context.Context, c resourcesync.Capability, u string, dr *DocReport, sr *SetReport, in *inspection) {
	w := &indexWalk{
		kind:     "resource list",
		parallel: 1, // the counts go into dr and sr
		seen:     in.lists,
		read: func(ctx context.Context, d walkDoc) ([]string, error) {
			children, err := s.readCounted(ctx, c, d.url, dr, sr, in)
			if d.depth == 0 && children != nil {
				dr.Index, dr.Documents = true, len(children)
			}
			return children, err
		},
		failed: func(_ context.Context, d walkDoc, err error) bool {
			if d.depth == 0 {
				dr.Error = err.Error()
			} else {
				dr.Failed = append(dr.Failed, Problem{URL: d.url, Msg: err.Error()})
			}
			return true
		},
	}
	_ = w.run(ctx, []walkDoc{{url: u}}) // every failure is the document's own; the context's is Inspect's
}

// inspectResourceDump reads a Resource Dump (or index) as a load does
// (dumpWalk), each document once, counts what each holds, and reports
// every package it names (InspectPackage).
func (s *Source) inspectResourceDump(ctx context.Context, u string, dr *DocReport, sr *SetReport) {
	w := &dumpWalk{s: s, get: s.GetDoc}
	w.seen = func(depth int, doc *resourcesync.Document) {
		for _, pw := range doc.Warnings {
			dr.Warnings = append(dr.Warnings, ProblemOf(pw))
		}
		if doc.Header.Root == resourcesync.SitemapIndex {
			if depth == 0 {
				dr.Index, dr.Documents = true, len(doc.Entries)
			}
			return
		}
		for i := range doc.Entries {
			dr.Entries++
			sr.Count(resourcesync.CapResourceDump, &doc.Entries[i])
		}
	}
	w.failed = func(child string, err error) {
		dr.Failed = append(dr.Failed, Problem{URL: child, Msg: err.Error()})
	}
	pkgs, err := w.packages(ctx, u)
	if err != nil {
		dr.Error = err.Error()
		sr.Packages = append(sr.Packages, PackageReport{URL: u, Error: "read dump: " + err.Error()})
	}
	for _, p := range pkgs {
		sr.Packages = append(sr.Packages, s.InspectPackage(ctx, p.url, sr))
	}
}

// readCounted streams one document. For an index it returns the
// children's URLs; otherwise it adds the entries to the reports.
func (s *Source) readCounted(ctx context.Context, c resourcesync.Capability, u string, dr *DocReport, sr *SetReport, in *inspection) ([]string, error) {
	resp, err := s.opts.Client.Get(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r, err := resourcesync.NewReader(resp.Body, resp.URL, s.opts.Parse)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, w := range r.Warnings() {
			dr.Warnings = append(dr.Warnings, ProblemOf(w))
		}
		s.warnReader(r)
	}()
	h, err := r.Header()
	if err != nil {
		return nil, err
	}
	if c == resourcesync.CapResourceList && h.Root == resourcesync.URLSet {
		if at := ListTime(&h.MD); !at.IsZero() && (in.listedAt.IsZero() || at.Before(in.listedAt)) {
			in.listedAt = at
		}
	}
	var children []string
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return children, err
		}
		if h.Root == resourcesync.SitemapIndex {
			s.AllowDoc(e.Loc) // as loading does: one policy for inspect and mount
			children = append(children, e.Loc)
			continue
		}
		dr.Entries++
		sr.Count(c, e)
	}
	if h.Root == resourcesync.SitemapIndex && children == nil {
		children = []string{}
	}
	return children, nil
}

// Count counts an entry of a document of capability c in the set's
// report: a resource, a dump package, a change, and their links.
func (sr *SetReport) Count(c resourcesync.Capability, e *resourcesync.Entry) {
	if c == resourcesync.CapResourceList || c == resourcesync.CapChangeList {
		sr.noteLinks(e)
	}
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
	}
}

// IsChangeDoc reports whether c's documents are change documents, read by
// package changes.
func IsChangeDoc(c resourcesync.Capability) bool {
	return c == resourcesync.CapChangeList || c == resourcesync.CapChangeDump
}

func isChannel(c resourcesync.Capability) bool {
	return c == resourcesync.CapChangeNotification || c == resourcesync.CapFrameworkNotification
}

// InspectPackage opens a dump package and checks its manifest against its
// members; the manifest's links count in sr.
func (s *Source) InspectPackage(ctx context.Context, url string, sr *SetReport) PackageReport {
	pkg, err := s.pkgs.open(ctx, url)
	if err != nil {
		return sr.NotePackage(url, nil, nil, err)
	}
	man, err := ReadManifest(ctx, pkg)
	return sr.NotePackage(url, pkg, man, err)
}

// NotePackage describes a dump package as opened (pkg nil: it could not
// be, err says why) with its manifest (nil: it could not be read, err says
// why), checking the manifest against the members; the manifest's links
// count in sr.
func (sr *SetReport) NotePackage(url string, pkg *zipindex.Package, man *resourcesync.Document, err error) PackageReport {
	rep := PackageReport{URL: url, Methods: map[string]int{}}
	if pkg == nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Size, rep.Members = pkg.Size, len(pkg.Members)
	for _, m := range pkg.Members {
		rep.Methods[methodName(m.Method)]++
	}
	if man == nil {
		rep.Error = err.Error()
		return rep
	}
	rep.ManifestEntries = len(man.Entries)
	for i := range man.Entries {
		e := &man.Entries[i]
		sr.noteLinks(e)
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
