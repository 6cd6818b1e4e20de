package main

import (
	"fmt"
	"path"
	"strings"
)

// layout is how the small files of a generated tree lie in directories.
// Files are created in index order, and a Resource Dump lists them in that
// order too (as a publisher writes them in deposit order), which is not
// the paths' order unless the layout makes it so.
type layout struct {
	name string
	desc string
	path func(i int) string // the path of the i-th file created, under data/
}

const (
	fanoutDirs   = 850 // directories of the fanout layout
	fanoutTop    = 10  // of which top-level: d00 … d09, each holding 85
	itemMembers  = 5   // files per item of the items layout
	itemDataFile = 3   // of which under the item's data/
)

var layouts = map[string]layout{
	"flat": {name: "flat", desc: fmt.Sprintf("%d files per directory, in path order", perDir),
		path: func(i int) string { return fmt.Sprintf("data/d%04d/f%07d.txt", i/perDir, i) }},
	"fanout": {name: "fanout", desc: fmt.Sprintf("%d directories of about 6 files, two levels (d00/s000/…), files created round-robin across them", fanoutDirs),
		path: fanoutPath},
	"items": {name: "items", desc: "items of 5 files each (bag-info.txt, manifest-md5.txt and data/ with 3 files), created item by item",
		path: itemPath},
}

// fanoutPath spreads files round-robin over the directories: file i lies
// in directory i mod 850, so consecutive files are never neighbours.
func fanoutPath(i int) string {
	k := i % fanoutDirs
	per := fanoutDirs / fanoutTop
	return fmt.Sprintf("data/d%02d/s%03d/f%07d.txt", k/per, k%per, i)
}

// itemPath is a BagIt bag per item, its payload written first, then its
// manifest and bag-info.txt, as bagging tools write them.
func itemPath(i int) string {
	item, j := i/itemMembers, i%itemMembers
	dir := fmt.Sprintf("data/item%05d", item)
	switch {
	case j < itemDataFile:
		return fmt.Sprintf("%s/data/file%d.txt", dir, j+1)
	case j == itemDataFile:
		return dir + "/manifest-md5.txt"
	}
	return dir + "/bag-info.txt"
}

// parseLayouts reads -layout's comma list.
func parseLayouts(s string) ([]layout, error) {
	var out []layout
	for _, f := range strings.Split(s, ",") {
		l, ok := layouts[strings.TrimSpace(f)]
		if !ok {
			return nil, fmt.Errorf("-layout: unknown layout %q (flat, fanout, items)", f)
		}
		out = append(out, l)
	}
	return out, nil
}

// dirsUnder counts the directories strictly under data/ that hold paths.
func dirsUnder(paths []string) int {
	seen := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); d != "data" && d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
		}
	}
	return len(seen)
}
