package source

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"rsfs/resourcesync"
	"rsfs/zipindex"
)

// ManifestName is the member every Resource Dump and Change Dump package
// must have.
const ManifestName = "manifest.xml"

// maxManifestParts bounds the manifests a Manifest Index may name.
const maxManifestParts = 10_000

// ReadManifest reads a dump package's /manifest.xml: a Resource Dump Manifest, a Change Dump
// Manifest, or a Manifest Index (a sitemapindex naming manifests inside the
// package by rs:md path, else by loc), whose manifests are read and whose
// entries are merged in index order. The result's Header is manifest.xml's;
// documents are parsed with the package name as their URL.
func ReadManifest(ctx context.Context, p *zipindex.Package) (*resourcesync.Document, error) {
	doc, err := parseMember(ctx, p, ManifestName)
	if err != nil {
		return nil, err
	}
	if doc.Header.Root != resourcesync.SitemapIndex {
		return doc, nil
	}
	if len(doc.Entries) > maxManifestParts {
		return nil, packageErrorf(p, zipindex.ErrHostile, "manifest index names %d manifests", len(doc.Entries))
	}
	merged := &resourcesync.Document{Header: doc.Header, Warnings: doc.Warnings}
	for _, e := range doc.Entries {
		name := manifestPartName(e)
		if strings.TrimPrefix(name, "/") == ManifestName {
			return nil, packageErrorf(p, zipindex.ErrHostile, "manifest index names itself")
		}
		part, err := parseMember(ctx, p, name)
		if err != nil {
			return nil, err
		}
		if part.Header.Root != resourcesync.URLSet {
			return nil, packageErrorf(p, zipindex.ErrCorrupt, "manifest %s is itself an index", name)
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
func parseMember(ctx context.Context, p *zipindex.Package, name string) (*resourcesync.Document, error) {
	m, ok := p.Lookup(name)
	if !ok {
		return nil, packageErrorf(p, zipindex.ErrCorrupt, "no %s in the package", name)
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

// packageErrorf wraps sentinel (zipindex.ErrHostile, ErrCorrupt) with the
// package's name, as zipindex's own errors are.
func packageErrorf(p *zipindex.Package, sentinel error, format string, args ...any) error {
	return fmt.Errorf("zip %s: %s: %w", p.Name, fmt.Sprintf(format, args...), sentinel)
}
