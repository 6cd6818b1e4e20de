package sourcetest

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	rs "rsfs/resourcesync"
)

// Resource Dumps (Config.Dumps) are built once, at Start, from the initial
// state: a later Update does not change them (a dump is a snapshot), so the
// manifest keeps the old hash and lastmod. Packages are held in memory
// (about the sum of the body sizes plus the manifests): use dumps for
// Sources of a few thousand resources.

// Dump methods for Config.DumpMethod.
const (
	DumpMixed   = "mixed"   // alternately stored and deflated members
	DumpStored  = "stored"  // every member stored
	DumpDeflate = "deflate" // every member deflated
	DumpZstd    = "zstd"    // every member zstd (method 93)
)

// DefaultPerDump is the default number of resources per dump package.
const DefaultPerDump = 1000

// dumpPackage is one generated ZIP package.
type dumpPackage struct {
	data []byte
	etag string
	md5  string
}

// withDumpDefaults fills in and checks the dump fields.
func (cfg Config) withDumpDefaults() (Config, error) {
	if cfg.PerDump == 0 {
		cfg.PerDump = DefaultPerDump
	}
	if cfg.DumpMethod == "" {
		cfg.DumpMethod = DumpMixed
	}
	switch {
	case cfg.PerDump < 1:
		return cfg, fmt.Errorf("sourcetest: PerDump %d < 1", cfg.PerDump)
	case cfg.DumpOnly && !cfg.Dumps:
		return cfg, fmt.Errorf("sourcetest: DumpOnly needs Dumps")
	}
	switch cfg.DumpMethod {
	case DumpMixed, DumpStored, DumpDeflate, DumpZstd:
		return cfg, nil
	}
	return cfg, fmt.Errorf("sourcetest: unknown DumpMethod %q", cfg.DumpMethod)
}

// ResourceDumpURL returns the URL of set k's Resource Dump.
func (s *Source) ResourceDumpURL(k int) string {
	return s.base + s.setPrefix(k)[1:] + "resourcedump.xml"
}

// DumpPackageURL returns the URL of set k's package n (from 0).
func (s *Source) DumpPackageURL(k, n int) string {
	return s.base + s.setPrefix(k)[1:] + fmt.Sprintf("dumps/part%d.zip", n+1)
}

// DumpPackages returns the number of packages of set k.
func (s *Source) DumpPackages(k int) int { return len(s.dumps[k]) }

// DumpMemberPath is the path inside a package of the resource at key.
func DumpMemberPath(key string) string { return "/resources" + key }

// buildDumps generates every set's packages from the current state.
func (s *Source) buildDumps() error {
	s.dumps = make([][]dumpPackage, len(s.sets))
	for k, set := range s.sets {
		for from := 0; from < set.slots(); from += s.cfg.PerDump {
			s.mu.RLock()
			batch := s.slotsLocked(k, from, min(from+s.cfg.PerDump, set.slots()))
			s.mu.RUnlock()
			pkg, err := s.buildPackage(batch)
			if err != nil {
				return fmt.Errorf("sourcetest: dump %d of set %d: %w", len(s.dumps[k])+1, k, err)
			}
			s.dumps[k] = append(s.dumps[k], pkg)
		}
	}
	return nil
}

// buildPackage writes one package: manifest.xml, then the bitstreams.
func (s *Source) buildPackage(batch []resState) (dumpPackage, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(93, func(w io.Writer) (io.WriteCloser, error) {
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
	})
	manifest, err := s.manifest(batch)
	if err != nil {
		return dumpPackage{}, err
	}
	if err := writeMember(zw, "manifest.xml", zip.Deflate, s.startAt, manifest); err != nil {
		return dumpPackage{}, err
	}
	for i := range batch {
		r := &batch[i]
		if r.deleted {
			continue
		}
		name := DumpMemberPath(r.key)[1:]
		if err := writeMember(zw, name, s.dumpMethod(i), r.lastmod, r.bodyBytes(s.cfg.Seed)); err != nil {
			return dumpPackage{}, err
		}
	}
	if err := zw.Close(); err != nil {
		return dumpPackage{}, err
	}
	sum := md5.Sum(buf.Bytes())
	return dumpPackage{data: buf.Bytes(), etag: fmt.Sprintf(`"z%s-%x"`, s.fingerprint, sum[:6]), md5: fmt.Sprintf("%x", sum)}, nil
}

// dumpMethod is the method of the i-th member of a package.
func (s *Source) dumpMethod(i int) uint16 {
	switch s.cfg.DumpMethod {
	case DumpStored:
		return zip.Store
	case DumpDeflate:
		return zip.Deflate
	case DumpZstd:
		return 93
	}
	if i%2 == 0 {
		return zip.Store
	}
	return zip.Deflate
}

func writeMember(zw *zip.Writer, name string, method uint16, mod time.Time, body []byte) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: mod})
	if err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	return nil
}

// manifest renders the Resource Dump Manifest of batch.
func (s *Source) manifest(batch []resState) ([]byte, error) {
	var buf bytes.Buffer
	h := rs.Header{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapResourceDumpManifest, At: s.startAt, Length: rs.NoLength}}
	wr := rs.NewWriter(&buf, &h)
	for i := range batch {
		r := s.withDigests(&batch[i])
		if r.deleted {
			continue
		}
		e := rs.Entry{Loc: r.uri, Lastmod: r.lastmod, MD: rs.MD{Hashes: toHashes(s.cfg.Hashes, r.digests),
			Length: r.size, Type: r.typ, Path: DumpMemberPath(r.key)}}
		if err := wr.Write(&e); err != nil {
			return nil, err
		}
	}
	if err := wr.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeResourceDump writes set k's Resource Dump.
func (s *Source) writeResourceDump(w io.Writer, k int) error {
	h := rs.Header{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapResourceDump, At: s.startAt, Length: rs.NoLength},
		Links: []rs.Link{{Rel: "up", Href: s.CapabilityListURL(k), Length: rs.NoLength}}}
	wr := rs.NewWriter(w, &h)
	for n, pkg := range s.dumps[k] {
		e := rs.Entry{Loc: s.DumpPackageURL(k, n), Lastmod: s.startAt, MD: rs.MD{Type: "application/zip",
			Length: int64(len(pkg.data)), Hashes: []rs.Hash{{Alg: "md5", Value: pkg.md5}}}}
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	return wr.Close()
}

// serveDump answers the Resource Dump and its packages; false when path is
// neither.
func (s *Source) serveDump(w http.ResponseWriter, r *http.Request, path string) bool {
	if !s.cfg.Dumps {
		return false
	}
	k, rest, ok := s.splitDumpPath(path)
	if !ok {
		return false
	}
	if rest == "resourcedump.xml" {
		s.count.otherDocs.Add(1)
		var buf bytes.Buffer
		if err := s.writeResourceDump(&buf, k); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return true
		}
		w.Header().Set("Content-Type", "application/xml")
		http.ServeContent(w, r, "", s.startAt, bytes.NewReader(buf.Bytes()))
		return true
	}
	num, ok := strings.CutPrefix(rest, "dumps/part")
	num, zipExt := strings.CutSuffix(num, ".zip")
	n, err := strconv.Atoi(num)
	if !ok || !zipExt || err != nil || n < 1 || n > len(s.dumps[k]) || strconv.Itoa(n) != num {
		return false
	}
	pkg := s.dumps[k][n-1]
	if r.Method == http.MethodGet {
		if r.Header.Get("Range") != "" {
			s.count.dumpRanges.Add(1)
		} else {
			s.count.dumpWholeGets.Add(1)
		}
	}
	w.Header().Set("ETag", pkg.etag)
	w.Header().Set("Content-Type", "application/zip")
	http.ServeContent(w, r, "", s.startAt, bytes.NewReader(pkg.data))
	return true
}

// splitDumpPath splits a path into its set and the dump name within it.
func (s *Source) splitDumpPath(path string) (int, string, bool) {
	for k := range s.sets {
		if rest, ok := strings.CutPrefix(path, s.setPrefix(k)); ok {
			return k, rest, true
		}
	}
	return 0, "", false
}

// withDumpEntries adds the Resource Dump to a Capability List's entries and,
// with DumpOnly, drops the Resource List.
func (s *Source) withDumpEntries(entries []rs.Entry, k int) []rs.Entry {
	if !s.cfg.Dumps {
		return entries
	}
	if s.cfg.DumpOnly {
		entries = entries[1:]
	}
	return append(entries, rs.Entry{Loc: s.ResourceDumpURL(k), MD: rs.MD{Capability: rs.CapResourceDump, Length: rs.NoLength}})
}

// hiddenByDumpOnly reports whether DumpOnly withholds document d.
func (s *Source) hiddenByDumpOnly(d docRef) bool {
	return s.cfg.DumpOnly && (d.kind == docResourceList || d.kind == docIndex || d.kind == docPage)
}
