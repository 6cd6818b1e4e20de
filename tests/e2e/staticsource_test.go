package e2e

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// staticFile is one resource of a static Source: its <loc> as published,
// the path its bytes are served at under the Source's root, and the bytes.
type staticFile struct {
	loc  string
	path string
	body []byte
}

// writeStaticSource writes a ResourceSync Source as plain files under root,
// for any web server to serve at base (with a trailing "/"): a Source
// Description at /.well-known/resourcesync, one Capability List and one
// Resource List of files, each with its length and md5.
func writeStaticSource(t *testing.T, root, base string, files []staticFile) {
	t.Helper()
	const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write(".well-known/resourcesync", fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset %s><rs:md capability="description"/>
<url><loc>%scapabilitylist.xml</loc><rs:md capability="capabilitylist"/></url></urlset>
`, ns, base))
	write("capabilitylist.xml", fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset %s><rs:ln rel="up" href="%s.well-known/resourcesync"/><rs:md capability="capabilitylist"/>
<url><loc>%sresourcelist.xml</loc><rs:md capability="resourcelist"/></url></urlset>
`, ns, base, base))
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<urlset %s><rs:ln rel="up" href="%scapabilitylist.xml"/><rs:md capability="resourcelist" at="2026-01-01T00:00:00Z" completed="2026-01-01T00:00:00Z"/>
`, ns, base)
	sort.Slice(files, func(i, j int) bool { return files[i].loc < files[j].loc })
	for _, f := range files {
		sum := md5.Sum(f.body)
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2026-01-01T00:00:00Z</lastmod><rs:md length=\"%d\" hash=\"md5:%s\"/></url>\n",
			f.loc, len(f.body), hex.EncodeToString(sum[:]))
		write(f.path, string(f.body))
	}
	b.WriteString("</urlset>\n")
	write("resourcelist.xml", b.String())
}
