package changes

import (
	"context"

	"rsfs/resourcesync"
	"rsfs/source"
)

// walkReport is what an inspection's walk read, for inspect's report: the
// documents read whole, by visit, and the Change Dump packages opened (the
// manifests' links counted in sr as they are read). Each change document
// is read once, by the walk: source's Inspect names them but leaves their
// reports to fill.
type walkReport struct {
	sr   *source.SetReport
	docs map[int]*resourcesync.Document
	pkgs map[string]source.PackageReport
}

func newWalkReport(sr *source.SetReport) *walkReport {
	return &walkReport{sr: sr, docs: map[int]*resourcesync.Document{}, pkgs: map[string]source.PackageReport{}}
}

// noteDoc keeps the document the visit me read whole; nil r keeps nothing.
func (r *walkReport) noteDoc(me int, doc *resourcesync.Document) {
	if r != nil {
		r.docs[me] = doc
	}
}

// fill fills sr's reports of the change documents the Capability List
// names with what w read under each, to source.MaxDepth: whether it is an
// index and of how many documents, the entries read, the documents that
// could not be read and what the parser tolerated. Their entries count in sr
// (changes, dump packages, links), and every package a Change Dump read
// names is reported: opened by the walk, or here when the walk skipped it
// (closed before the position).
func (r *walkReport) fill(ctx context.Context, src *source.Source, w *walk) {
	root := make([]int, len(w.visits)) // each visit's ancestor the Capability List names
	reps := map[int]*source.DocReport{}
	var pkgs []source.PackageReport
	for i, v := range w.visits {
		root[i] = i
		if v.parent >= 0 {
			root[i] = root[v.parent]
		} else {
			reps[i] = &source.DocReport{Capability: capOf(v), URL: v.url, Documents: 1}
		}
		dr := reps[root[i]]
		doc := r.docs[i]
		if doc == nil {
			msg := "not read"
			if err := w.failed[v.url]; err != nil {
				msg = cause(err)
			}
			if i == root[i] {
				dr.Error = msg
			} else {
				dr.Failed = append(dr.Failed, source.Problem{URL: v.url, Msg: msg})
			}
			if v.dump {
				pkgs = append(pkgs, source.PackageReport{URL: v.url, Error: msg})
			}
			continue
		}
		for _, pw := range doc.Warnings {
			dr.Warnings = append(dr.Warnings, source.ProblemOf(pw))
		}
		if doc.Header.Root == resourcesync.SitemapIndex {
			if i == root[i] {
				dr.Index, dr.Documents = true, len(doc.Entries)
			}
			continue
		}
		dr.Entries += int64(len(doc.Entries))
		for j := range doc.Entries {
			e := &doc.Entries[j]
			r.sr.Count(capOf(v), e)
			if !v.dump {
				continue
			}
			pr, opened := r.pkgs[e.Loc]
			if !opened {
				pr = src.InspectPackage(ctx, e.Loc, r.sr)
			}
			pkgs = append(pkgs, pr)
		}
	}
	for i := range r.sr.Documents {
		d := &r.sr.Documents[i]
		if !source.IsChangeDoc(d.Capability) {
			continue
		}
		for v, dr := range reps {
			if dr.URL == d.URL && dr.Capability == d.Capability && w.visits[v].parent < 0 {
				*d = *dr
				break
			}
		}
	}
	// A Change Dump's packages come first, as its capability sorts first.
	r.sr.Packages = append(pkgs, r.sr.Packages...)
}

func capOf(v visit) resourcesync.Capability {
	if v.dump {
		return resourcesync.CapChangeDump
	}
	return resourcesync.CapChangeList
}

// onceReads reads each document whole, once per walk: inspect's reader,
// for which a document named twice (by the Capability List and by an
// index) is one request.
type onceReads struct {
	wholeReads
	got map[string]onceRead
}

type onceRead struct {
	doc *resourcesync.Document
	err error
}

func (o onceReads) get(ctx context.Context, u string) (*resourcesync.Document, error) {
	if r, ok := o.got[u]; ok {
		return r.doc, r.err
	}
	doc, err := o.wholeReads.get(ctx, u)
	o.got[u] = onceRead{doc, err}
	return doc, err
}
