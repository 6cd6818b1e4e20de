package main

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/fs"
	"rsfs/protocol"
	"rsfs/remember"
	"rsfs/resourcesync"
	"rsfs/source"
	"rsfs/status"
)

// audit's exit statuses, as diff(1)'s: no drift, drift, trouble.
const (
	auditClean = 0
	auditDrift = 1
	auditError = 2
)

// auditExamples is how many paths of each kind the text report names.
const auditExamples = 10

func auditCmd() *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit URL|DIR",
		Short: "Compare what a mount shows, or would show from its snapshot, with the Source as it is now",
		Long: `audit reads the Source as it is now (its Resource Lists, plus every change
its Change Lists and Change Dumps list after them, dated as a mount dates
them) and compares it, path by path, with what a mount shows:

  DIR  the live rsfs mount at DIR: its tree as stat(2) and its extended
       attributes show it (path, size, mtime, URI, hashes);
  URL  what a mount of URL would show from its snapshot in the state
       directory (--cache-dir, as for mount) before it catches up.

It prints how many paths the Source has and the mount lacks (created), has in
another version (updated: another hash, else another lastmod or size) and
the mount has and the Source lacks (deleted), with examples. --bytes N also
reads N files picked at random (from the mount for DIR, from the Source for
URL) and checks their length and every md5, sha-1 and sha-256 published; a
mismatch, or a file that cannot be read, is listed as wrong bytes.

Exit status: 0 no drift, 1 drift (or wrong bytes), 2 trouble (the Source or
the mount could not be read, no snapshot).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if o.bytes < 0 {
				return usagef("--bytes %d: want 0 or more files", o.bytes)
			}
			rep, err := runAudit(cmd.Context(), &o, args[0])
			if err != nil {
				return exitWith(auditError, err)
			}
			if err := rep.write(cmd.OutOrStdout(), o.asJSON); err != nil {
				return exitWith(auditError, err)
			}
			if rep.Drift > 0 {
				return exitWith(auditDrift, nil) // the report says what
			}
			return nil
		},
	}
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.cacheDir, "cache-dir", "", "for URL: where the mount remembers Sources (as mount's --cache-dir): default $XDG_CACHE_HOME/rsfs")
	fl.IntVar(&o.bytes, "bytes", 0, "also read this many files, picked at random, and check them against the published length and hashes")
	fl.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	return cmd
}

type auditOptions struct {
	sourceFlags
	cacheDir string
	bytes    int
	asJSON   bool
}

// auditReport is what audit found. Paths are relative to the mount's
// root, as the mount maps URIs to paths.
type auditReport struct {
	Source   string `json:"source"`             // the URL the mount was given
	Origin   string `json:"origin"`             // the Source's origin
	Mount    string `json:"mount,omitempty"`    // DIR: the mount audited
	Snapshot string `json:"snapshot,omitempty"` // URL: the snapshot audited
	Files    int    `json:"files"`              // the files the mount shows (or the snapshot holds)
	Truth    int    `json:"truth"`              // the resources the Source has now

	Created []string `json:"created"` // paths the Source has and the mount lacks
	Updated []string `json:"updated"` // paths the mount shows in another version
	Deleted []string `json:"deleted"` // paths the mount shows and the Source lacks

	BytesChecked int          `json:"bytes_checked"`
	WrongBytes   []wrongBytes `json:"wrong_bytes"`

	Drift int `json:"drift"` // created + updated + deleted + wrong bytes
}

// wrongBytes is a file whose bytes do not match what the Source publishes.
type wrongBytes struct {
	Path   string `json:"path"`
	URI    string `json:"uri"`
	Reason string `json:"reason"`
}

// runAudit audits target: a directory (a live mount) or a URL (its
// snapshot).
func runAudit(ctx context.Context, o *auditOptions, target string) (*auditReport, error) {
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		return auditMount(ctx, o, target)
	}
	return auditSnapshot(ctx, o, target)
}

// truthOf discovers the Source at rawURL afresh and reads it as it is now.
func truthOf(ctx context.Context, o *auditOptions, rawURL string) (*source.Source, *catalog.Catalog, error) {
	client, err := o.client(rawURL)
	if err != nil {
		return nil, nil, err
	}
	opts := o.sourceOptions(client)
	found, err := source.Discover(ctx, rawURL, opts)
	if err != nil {
		return nil, nil, err
	}
	if found.Source == nil {
		return nil, nil, fmt.Errorf("%s is an %s feed: audit reads ResourceSync Sources only", rawURL, found.Protocol)
	}
	truth, err := changes.Truth(ctx, found.Source)
	if err != nil {
		return nil, nil, err
	}
	return found.Source, truth, nil
}

// auditSnapshot compares the snapshot a mount of rawURL would start from
// with the Source now.
func auditSnapshot(ctx context.Context, o *auditOptions, rawURL string) (*auditReport, error) {
	stateDir, err := (&mountFlags{cacheDir: o.cacheDir}).stateDir(rawURL)
	if err != nil {
		return nil, err
	}
	if stateDir == "" {
		return nil, errors.New("--cache-dir none: a mount remembers nothing, so there is no snapshot to audit")
	}
	snapPath := remember.SnapshotPath(stateDir)
	if _, err := os.Stat(snapPath); err != nil {
		return nil, fmt.Errorf("no snapshot of %s (looked for %s): mount it first, or give the --cache-dir it was mounted with; to audit a live mount, give its directory", rawURL, snapPath)
	}
	src, truth, err := truthOf(ctx, o, rawURL)
	if err != nil {
		return nil, err
	}
	have, _, err := catalog.LoadSnapshot(snapPath, catalog.Options{Origin: src.Origin})
	if err != nil {
		return nil, err
	}
	rep := &auditReport{Source: rawURL, Origin: src.Origin, Snapshot: snapPath, Files: have.Len(), Truth: truth.Len()}
	d := changes.Compare(have, truth)
	rep.Created = pathsOf(truth, d.Created)
	rep.Updated = pathsOf(have, d.Updated)
	rep.Deleted = pathsOf(have, d.Deleted)
	if o.bytes > 0 {
		client := src.Client()
		rep.checkBytes(pickFiles(truthFiles(truth), o.bytes), func(p string, want *catalog.Resource) (io.ReadCloser, error) {
			resp, err := client.Get(ctx, want.URI, nil)
			if err != nil {
				return nil, err
			}
			return resp.Body, nil
		})
	}
	rep.finish()
	return rep, nil
}

// pathsOf is the sorted paths of uris in cat.
func pathsOf(cat *catalog.Catalog, uris []string) []string {
	out := make([]string, 0, len(uris))
	for _, u := range uris {
		if id, ok := cat.ByURI(u); ok {
			out = append(out, cat.Path(id))
		} else {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// truthFiles is every live file of cat by path.
func truthFiles(cat *catalog.Catalog) map[string]*catalog.Resource {
	out := make(map[string]*catalog.Resource, cat.Len())
	for _, u := range cat.URIs() {
		id, ok := cat.ByURI(u)
		if !ok {
			continue
		}
		if r, ok := cat.Resource(id); ok {
			out[cat.Path(id)] = r
		}
	}
	return out
}

// auditMount compares the live mount at dir with the Source now, path by
// path.
func auditMount(ctx context.Context, o *auditOptions, dir string) (*auditReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := readStatus(abs)
	if err != nil {
		return nil, err
	}
	var st status.Report
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("status of %s: %w", abs, err)
	}
	if st.Protocol != "" && st.Protocol != protocol.ResourceSync {
		return nil, fmt.Errorf("%s mounts an %s feed: audit reads ResourceSync Sources only", abs, st.Protocol)
	}
	src, truth, err := truthOf(ctx, o, st.Source)
	if err != nil {
		return nil, err
	}
	shown, err := walkMount(abs)
	if err != nil {
		return nil, err
	}
	want := truthFiles(truth)
	rep := &auditReport{Source: st.Source, Origin: src.Origin, Mount: abs, Files: len(shown), Truth: len(want)}
	var same []string
	for p, w := range want {
		h, ok := shown[p]
		switch {
		case !ok:
			rep.Created = append(rep.Created, p)
		case h.URI != w.URI || !source.SameVersion(h, w.Hashes, w.Lastmod, w.Length):
			rep.Updated = append(rep.Updated, p)
		default:
			same = append(same, p)
		}
	}
	for p := range shown {
		if _, ok := want[p]; !ok {
			rep.Deleted = append(rep.Deleted, p)
		}
	}
	slices.Sort(rep.Created)
	slices.Sort(rep.Updated)
	slices.Sort(rep.Deleted)
	if o.bytes > 0 {
		files := make(map[string]*catalog.Resource, len(same))
		for _, p := range same {
			files[p] = want[p]
		}
		rep.checkBytes(pickFiles(files, o.bytes), func(p string, _ *catalog.Resource) (io.ReadCloser, error) {
			return os.Open(filepath.Join(abs, filepath.FromSlash(p)))
		})
	}
	rep.finish()
	return rep, nil
}

// walkMount is every file the mount at root shows, by path: its URI,
// hashes and lastmod from its extended attributes, its size from stat.
func walkMount(root string) (map[string]*catalog.Resource, error) {
	out := map[string]*catalog.Resource{}
	err := filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		r := &catalog.Resource{Length: fi.Size(), Lastmod: fi.ModTime()}
		if r.URI, err = getxattr(p, fs.XattrURI); err != nil {
			return err
		}
		h, err := getxattr(p, fs.XattrHash)
		if err != nil {
			return err
		}
		if h != "" {
			if r.Hashes, _, err = resourcesync.ParseHashes(h); err != nil {
				return fmt.Errorf("%s: %s: %w", p, fs.XattrHash, err)
			}
		}
		lm, err := getxattr(p, fs.XattrLastmod)
		if err != nil {
			return err
		}
		r.Lastmod = time.Time{} // no lastmod published: the mount shows the epoch
		if lm != "" {
			if r.Lastmod, err = time.Parse(time.RFC3339Nano, lm); err != nil {
				return fmt.Errorf("%s: %s: %w", p, fs.XattrLastmod, err)
			}
		}
		out[filepath.ToSlash(rel)] = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking the mount: %w", err)
	}
	return out, nil
}

// getxattr reads an extended attribute; "" when the file has none.
func getxattr(path, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := syscall.Getxattr(path, name, buf)
		switch {
		case err == nil:
			return string(buf[:n]), nil
		case errors.Is(err, syscall.ERANGE) && len(buf) < 1<<20:
			buf = make([]byte, 4*len(buf))
		case errors.Is(err, syscall.ENODATA):
			return "", nil
		default:
			return "", fmt.Errorf("%s: %s: %w", path, name, err)
		}
	}
}

// pickFiles picks n paths of files at random (all of them when there are
// no more), in path order.
func pickFiles(files map[string]*catalog.Resource, n int) map[string]*catalog.Resource {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths) // a deterministic start for the shuffle's input
	rand.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	out := make(map[string]*catalog.Resource, min(n, len(paths)))
	for _, p := range paths[:min(n, len(paths))] {
		out[p] = files[p]
	}
	return out
}

// checkBytes reads each file picked whole and checks its length and every
// md5, sha-1 and sha-256 the Source publishes for it. A file that cannot
// be read is wrong bytes too: a mount answers EIO for bytes that fail its
// own checks.
func (rep *auditReport) checkBytes(files map[string]*catalog.Resource, open func(path string, want *catalog.Resource) (io.ReadCloser, error)) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		want := files[p]
		rep.BytesChecked++
		if reason := checkFile(p, want, open); reason != "" {
			rep.WrongBytes = append(rep.WrongBytes, wrongBytes{Path: p, URI: want.URI, Reason: reason})
		}
	}
}

// checkFile reads one file and says how it is wrong; "" when it is right.
func checkFile(p string, want *catalog.Resource, open func(string, *catalog.Resource) (io.ReadCloser, error)) string {
	body, err := open(p, want)
	if err != nil {
		return "could not be read: " + err.Error()
	}
	defer body.Close()
	hashers := map[string]hash.Hash{}
	var writers []io.Writer
	for _, h := range want.Hashes {
		var hh hash.Hash
		switch h.Alg {
		case "md5":
			hh = md5.New()
		case "sha-1":
			hh = sha1.New()
		case "sha-256":
			hh = sha256.New()
		default:
			continue
		}
		hashers[h.Alg] = hh
		writers = append(writers, hh)
	}
	n, err := io.Copy(io.MultiWriter(append(writers, io.Discard)...), body)
	if err != nil {
		return fmt.Sprintf("could not be read (after %d bytes): %v", n, err)
	}
	if want.Length >= 0 && n != want.Length {
		return fmt.Sprintf("%d bytes, published length %d", n, want.Length)
	}
	for _, h := range want.Hashes {
		if hh, ok := hashers[h.Alg]; ok {
			if got := hex.EncodeToString(hh.Sum(nil)); got != h.Value {
				return fmt.Sprintf("%s is %s, published %s", h.Alg, got, h.Value)
			}
		}
	}
	return ""
}

func (rep *auditReport) finish() {
	for _, l := range []*[]string{&rep.Created, &rep.Updated, &rep.Deleted} {
		if *l == nil {
			*l = []string{}
		}
	}
	if rep.WrongBytes == nil {
		rep.WrongBytes = []wrongBytes{}
	}
	rep.Drift = len(rep.Created) + len(rep.Updated) + len(rep.Deleted) + len(rep.WrongBytes)
}

func (rep *auditReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "Source:   %s (origin %s): %d resources now\n", rep.Source, rep.Origin, rep.Truth)
	if rep.Mount != "" {
		fmt.Fprintf(w, "Mount:    %s: %d files\n", rep.Mount, rep.Files)
	} else {
		fmt.Fprintf(w, "Snapshot: %s: %d files\n", rep.Snapshot, rep.Files)
	}
	if n := len(rep.Created) + len(rep.Updated) + len(rep.Deleted); n == 0 {
		fmt.Fprintln(w, "Drift:    none")
	} else {
		fmt.Fprintf(w, "Drift:    %d created, %d deleted, %d updated\n", len(rep.Created), len(rep.Deleted), len(rep.Updated))
		for _, k := range []struct {
			kind  string
			paths []string
		}{{"created", rep.Created}, {"deleted", rep.Deleted}, {"updated", rep.Updated}} {
			for i, p := range k.paths {
				if i == auditExamples {
					fmt.Fprintf(w, "  %-8s ... and %d more\n", k.kind, len(k.paths)-i)
					break
				}
				fmt.Fprintf(w, "  %-8s %s\n", k.kind, p)
			}
		}
	}
	if rep.BytesChecked > 0 {
		fmt.Fprintf(w, "Bytes:    %d files read, %d wrong\n", rep.BytesChecked, len(rep.WrongBytes))
		for _, wb := range rep.WrongBytes {
			fmt.Fprintf(w, "  wrong bytes %s: %s\n", wb.Path, wb.Reason)
		}
	}
	return nil
}
