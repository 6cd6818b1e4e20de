package source

import (
	"context"
	"fmt"
	"io"

	"rsfs/resourcesync"
)

// node is a ResourceSync document discovery read: its header, and for a
// Source Description or Capability List (small documents) its entries.
type node struct {
	url   string
	cap   resourcesync.Capability
	root  resourcesync.RootKind
	links []resourcesync.Link
	doc   *resourcesync.Document
}

// link returns the href of the document's first rs:ln with rel.
func (n *node) link(rel string) string {
	for _, l := range n.links {
		if l.Rel == rel && l.Href != "" {
			return l.Href
		}
	}
	return ""
}

// upward returns the link that leads towards the document's Capability
// List and Source Description: up, else index.
func (n *node) upward() (rel, href string) {
	if h := n.link("up"); h != "" {
		return "up", h
	}
	return "index", n.link("index")
}

// top reports whether nothing is above the document: a Source Description
// (or Index), or a 1.0 Capability List Index.
func (n *node) top() bool {
	return n.cap == resourcesync.CapDescription ||
		(n.cap == resourcesync.CapCapabilityList && n.root == resourcesync.SitemapIndex)
}

func (n *node) check() error {
	if n.cap != "" && !n.cap.Known() {
		return fmt.Errorf("discover %s: unknown capability %q", n.url, n.cap)
	}
	return nil
}

// whole reports whether discovery reads all of a document with this
// capability, not only its header.
func whole(c resourcesync.Capability) bool {
	return c == resourcesync.CapDescription || c == resourcesync.CapCapabilityList
}

// readNode reads a document's header, and all of it when it is a Source
// Description or Capability List.
func (d *discovery) readNode(docURL string, body io.Reader) (*node, error) {
	s := d.s
	r, err := resourcesync.NewReader(body, docURL, s.opts.Parse)
	if err != nil {
		return nil, err
	}
	h, err := r.Header()
	if err != nil {
		return nil, err
	}
	n := &node{url: docURL, cap: h.Capability(), root: h.Root, links: h.Links}
	if whole(n.cap) {
		if n.doc, err = readRest(r, h); err != nil {
			return nil, err
		}
	}
	s.warn(r.Warnings())
	for _, w := range r.Warnings() {
		s.Warnings = append(s.Warnings, ProblemOf(w))
	}
	d.nodes[docURL] = n
	return n, nil
}

// fetchNode fetches and reads a document the Source names, once.
func (d *discovery) fetchNode(ctx context.Context, docURL string) (*node, error) {
	if n, ok := d.nodes[docURL]; ok {
		return n, nil
	}
	d.s.AllowDoc(docURL)
	resp, err := d.s.opts.Client.Get(ctx, docURL, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	n, err := d.readNode(resp.URL, io.LimitReader(resp.Body, d.s.maxDoc()))
	if err != nil {
		return nil, err
	}
	d.nodes[docURL] = n
	return n, nil
}

// startNode adopts the first ResourceSync document found: a Source
// Description (or Index) or 1.0 Capability List Index is read down; any
// other document is climbed from.
func (d *discovery) startNode(ctx context.Context, n *node) error {
	if err := n.check(); err != nil {
		return err
	}
	if n.top() {
		if err := d.adoptTop(ctx, n, nil); err != nil {
			return err
		}
		if len(d.s.sets) == 0 {
			return fmt.Errorf("discover %s: %w (it names no Capability List that could be read)", n.url, ErrNotFound)
		}
		return nil
	}
	return d.climb(ctx, n)
}

// climb follows up (else index) links from a document to the top of its
// Source, adopts what the top names, and makes sure the document it
// started from is in a set. A link that cannot be followed ends the climb
// with a warning; a loop or an overlong chain is an error.
func (d *discovery) climb(ctx context.Context, start *node) error {
	chain := []*node{start}
	inChain := map[string]bool{start.url: true}
	for cur := start; !cur.top(); {
		rel, next := cur.upward()
		if next == "" {
			break
		}
		if inChain[next] {
			return fmt.Errorf("discover %s: the %s link of %s leads back to %s (a loop)", start.url, rel, cur.url, next)
		}
		if len(chain) > maxHops {
			return fmt.Errorf("discover %s: more than %d up and index links in a row", start.url, maxHops)
		}
		n, err := d.fetchNode(ctx, next)
		if err == nil {
			err = n.check()
		}
		if err != nil {
			d.problem(next, fmt.Errorf("the %s link of %s cannot be followed: %w", rel, cur.url, err))
			break
		}
		d.votes.add(levelOf(n.cap), next)
		inChain[next], inChain[n.url] = true, true
		chain = append(chain, n)
		cur = n
	}
	if err := d.adoptTop(ctx, chain[len(chain)-1], nil); err != nil {
		return err
	}
	d.keepStart(chain)
	return nil
}

// adoptTop adopts the sets a document names, or the document itself as a
// set of its own.
func (d *discovery) adoptTop(ctx context.Context, top *node, above []string) error {
	switch {
	case top.cap == resourcesync.CapDescription:
		return d.description(ctx, top, above)
	case top.cap == resourcesync.CapCapabilityList && top.root == resourcesync.SitemapIndex:
		for _, e := range top.doc.Entries {
			d.votes.add(levelCapabilityList, e.Loc)
			if err := d.addCapabilityList(ctx, e.Loc); err != nil {
				return err
			}
		}
		return nil
	case top.cap == resourcesync.CapCapabilityList:
		d.addSet(d.capabilitySet(top))
		return nil
	}
	c := top.cap
	if c == "" {
		d.deviate(resourcesync.WarnNoCapability.At(top.url, 0, ""))
		c = resourcesync.CapResourceList
	}
	d.implicitDoc(c, top.url)
	return nil
}

// keepStart makes sure the document discovery started from is read: when
// the top its links lead to does not name it (nor the index or Capability
// List it names), its Capability List, else the document itself, is added
// as a set, with a warning.
func (d *discovery) keepStart(chain []*node) {
	named := map[string]bool{}
	for _, set := range d.s.sets {
		named[set.URL] = true
		for _, docs := range set.Docs {
			for _, u := range docs {
				named[u] = true
			}
		}
	}
	for _, n := range chain {
		if named[n.url] || named[n.link("index")] {
			return
		}
	}
	top := chain[len(chain)-1]
	for _, n := range chain {
		if n.cap == resourcesync.CapCapabilityList && n.root == resourcesync.URLSet {
			d.deviate(resourcesync.WarnUnnamedSet.At(n.url, 0, fmt.Sprintf("Capability List not named by %s, which its up link leads to", top.url)))
			d.addSet(d.capabilitySet(n))
			return
		}
	}
	start := chain[0]
	c := start.cap
	if c == "" {
		c = resourcesync.CapResourceList
	}
	d.deviate(resourcesync.WarnUnnamedSet.At(start.url, 0, fmt.Sprintf("not named by %s, which its links lead to", top.url)))
	d.implicitDoc(c, start.url)
}

// description adopts the Capability Lists a Source Description names, or
// the Source Descriptions a Source Description Index names. above are the
// indexes that led to it.
func (d *discovery) description(ctx context.Context, n *node, above []string) error {
	if n.root == resourcesync.SitemapIndex {
		return d.descriptionIndex(ctx, n, append(above, n.url))
	}
	for _, e := range n.doc.Entries {
		if e.MD.Capability != "" && e.MD.Capability != resourcesync.CapCapabilityList {
			d.deviate(resourcesync.WarnNotCapabilityList.At(n.url, 0, fmt.Sprintf("%s is a %q", e.Loc, e.MD.Capability)))
			continue
		}
		d.votes.add(levelCapabilityList, e.Loc)
		if err := d.addCapabilityList(ctx, e.Loc); err != nil {
			return err
		}
	}
	return nil
}

// descriptionIndex adopts every Source Description an index names (1.1
// §8: a Source with several Source Descriptions groups them in one); path
// is the chain of indexes down to this one.
func (d *discovery) descriptionIndex(ctx context.Context, n *node, path []string) error {
	if len(path) > maxHops {
		return fmt.Errorf("discover %s: Source Description Indexes nested more than %d deep", n.url, maxHops)
	}
	for _, e := range n.doc.Entries {
		for _, p := range path {
			if p == e.Loc {
				return fmt.Errorf("discover %s: Source Description Index names %s, which leads to it (a loop)", n.url, e.Loc)
			}
		}
		d.votes.add(levelDescription, e.Loc)
		if _, read := d.nodes[e.Loc]; read {
			continue // named twice: its sets are adopted
		}
		sub, err := d.fetchNode(ctx, e.Loc)
		if err == nil && sub.cap != resourcesync.CapDescription {
			err = fmt.Errorf("capability is %q, not %q", sub.cap, resourcesync.CapDescription)
		}
		if err != nil {
			if err := d.failed(e.Loc, fmt.Errorf("read source description named by %s: %w", n.url, err)); err != nil {
				return err
			}
			continue
		}
		if err := d.description(ctx, sub, path); err != nil {
			return err
		}
	}
	return nil
}

// addCapabilityList adopts the set of a Capability List, once. One that
// cannot be read is a set with no documents, noted unread (unreadcaps.go),
// unless Options.Partial (or a cancelled context) says otherwise.
func (d *discovery) addCapabilityList(ctx context.Context, capURL string) error {
	if d.hasSet(capURL) {
		return nil
	}
	n, err := d.fetchNode(ctx, capURL)
	if err == nil && (n.cap != resourcesync.CapCapabilityList || n.root != resourcesync.URLSet) {
		err = fmt.Errorf("capability is %q", n.cap)
	}
	if err != nil {
		err = fmt.Errorf("read capability list %s: %w", capURL, err)
		if d.s.opts.Partial || ctx.Err() != nil {
			return d.failed(capURL, err)
		}
		set := &Set{URL: capURL}
		d.addSet(set)
		d.s.noteUnreadCapabilityList(set, err)
		return nil
	}
	d.addSet(d.capabilitySet(n))
	return nil
}

func (d *discovery) capabilitySet(n *node) *Set {
	if up := n.link("up"); up != "" {
		d.votes.add(levelDescription, up)
	}
	for _, e := range n.doc.Entries {
		d.votes.add(levelDocument, e.Loc)
	}
	if w, ok := entryWithoutCapability(n.url, n.doc); ok {
		d.s.Warnings = append(d.s.Warnings, ProblemOf(w)) // logged by SetFromCapabilityList
	}
	return d.s.SetFromCapabilityList(n.url, n.doc)
}

// entryWithoutCapability is the warning about the first entry of a
// Capability List that has no capability, if one has none.
func entryWithoutCapability(capURL string, doc *resourcesync.Document) (resourcesync.Warning, bool) {
	for _, e := range doc.Entries {
		if e.MD.Capability == "" {
			return resourcesync.WarnEntryNoCapability.At(capURL, 0, e.Loc), true
		}
	}
	return resourcesync.Warning{}, false
}

func (d *discovery) hasSet(capURL string) bool {
	for _, set := range d.s.sets {
		if set.URL == capURL {
			return true
		}
	}
	return false
}

func (d *discovery) addSet(set *Set) {
	if set.URL != "" && d.hasSet(set.URL) {
		return
	}
	d.s.sets = append(d.s.sets, set)
}

// implicitDoc adds a document no Capability List names to the one set of
// such documents.
func (d *discovery) implicitDoc(c resourcesync.Capability, docURL string) {
	if d.implicit == nil {
		d.implicit = &Set{}
		d.s.sets = append(d.s.sets, d.implicit)
	}
	d.votes.add(levelDocument, docURL)
	d.s.addSetDoc(d.implicit, c, docURL)
}

// SetFromCapabilityList returns the set a Capability List read at capURL
// describes: the documents it names (their origins allowed) and its
// notification channels. It does not add it to Sets.
func (s *Source) SetFromCapabilityList(capURL string, doc *resourcesync.Document) *Set {
	set := &Set{URL: capURL, Links: doc.Header.Links}
	if w, ok := entryWithoutCapability(capURL, doc); ok {
		s.warn([]resourcesync.Warning{w})
	}
	for _, e := range doc.Entries {
		c := e.MD.Capability
		if c == "" {
			continue
		}
		s.addSetDoc(set, c, e.Loc)
		for _, l := range e.Links {
			if l.Rel == "hub" {
				set.Hubs = append(set.Hubs, Channel{Capability: c, Topic: e.Loc, Hub: l.Href})
			}
		}
	}
	return set
}

// failed handles a document a Source names that cannot be read: with
// Options.Partial it is recorded and discovery goes on, else it is the
// error.
func (d *discovery) failed(docURL string, err error) error {
	if !d.s.opts.Partial {
		return fmt.Errorf("discover: %w", err)
	}
	d.problem(docURL, err)
	return nil
}

// problem records a document that could not be read, and logs it.
func (d *discovery) problem(docURL string, err error) {
	d.s.log.Warn("document not read", "url", docURL, "err", err)
	d.s.Failed = append(d.s.Failed, Problem{URL: docURL, Msg: err.Error()})
}

// warn records something discovery tolerated, and logs it.
func (d *discovery) warn(docURL, msg string) {
	d.s.log.Warn(msg, "url", docURL)
	d.s.Warnings = append(d.s.Warnings, Problem{URL: docURL, Msg: msg})
}

// deviate records a deviation from the standard discovery tolerated, and
// logs it as the parser's are.
func (d *discovery) deviate(w resourcesync.Warning) {
	d.s.warn([]resourcesync.Warning{w})
	d.s.Warnings = append(d.s.Warnings, ProblemOf(w))
}
