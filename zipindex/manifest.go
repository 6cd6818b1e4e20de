package zipindex

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"rsfs/resourcesync"
)

// ManifestName is the member every Resource Dump and Change Dump package
// must have.
const ManifestName = "manifest.xml"

// maxManifestParts bounds the manifests a Manifest Index may name.
const maxManifestParts = 10_000

// Manifest reads /manifest.xml: a Resource Dump Manifest, a Change Dump
// Manifest, or a Manifest Index (a sitemapindex naming manifests inside the
// package by rs:md path, else by loc), whose manifests are read and whose
// entries are merged in index order. The result's Header is manifest.xml's;
// documents are parsed with the package name as their URL.
func (p *Package) Manifest(ctx context.Context) (*resourcesync.Document, error) {
	doc, err := p.parseMember(ctx, ManifestName)
	if err != nil {
		return nil, err
	}
	if doc.Header.Root != resourcesync.SitemapIndex {
		return doc, nil
	}
	if len(doc.Entries) > maxManifestParts {
		return nil, p.errorf(ErrHostile, "manifest index names %d manifests", len(doc.Entries))
	}
	merged := &resourcesync.Document{Header: doc.Header, Warnings: doc.Warnings}
	for _, e := range doc.Entries {
		name := manifestPartName(e)
		if strings.TrimPrefix(name, "/") == ManifestName {
			return nil, p.errorf(ErrHostile, "manifest index names itself")
		}
		part, err := p.parseMember(ctx, name)
		if err != nil {
			return nil, err
		}
		if part.Header.Root != resourcesync.URLSet {
			return nil, p.errorf(ErrCorrupt, "manifest %s is itself an index", name)
		}
		merged.Entries = append(merged.Entries, part.Entries...)
		merged.Warnings = append(merged.Warnings, part.Warnings...)
	}
	return merged, nil
}

// manifestPartName is the member an index entry names: its rs:md path, or
// the path of its loc.
func manifestPartName(e resourcesync.Entry) string {
	if e.MD.Path != "" {
		return e.MD.Path
	}
	if u, err := url.Parse(e.Loc); err == nil {
		return u.Path
	}
	return e.Loc
}

// parseMember parses a member as a ResourceSync document.
func (p *Package) parseMember(ctx context.Context, name string) (*resourcesync.Document, error) {
	m, ok := p.Lookup(name)
	if !ok {
		return nil, p.errorf(ErrCorrupt, "no %s in the package", name)
	}
	rc, err := p.Reader(ctx, m, 0, m.Size)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	doc, err := resourcesync.Parse(rc, p.Name, resourcesync.Options{})
	if err != nil {
		return nil, fmt.Errorf("zip %s: member %q: %w", p.Name, m.Name, err)
	}
	return doc, nil
}
