package audit

import (
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"slices"

	"rsfs/catalog"
	"rsfs/resourcesync"
)

// opener opens the file at path, whose record the Source publishes is want.
type opener func(path string, want *catalog.Resource) (io.ReadCloser, error)

// pick picks n paths of files at random (all of them when there are no
// more).
func pick(files map[string]*catalog.Resource, n int) map[string]*catalog.Resource {
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

// checkBytes reads each file picked whole, in path order, and checks its
// length and every hash the Source publishes for it in an algorithm
// resourcesync knows (md5, sha-1, sha-256). A file that cannot be read is
// wrong bytes too: a mount answers EIO for bytes that fail its own checks.
func (rep *Report) checkBytes(files map[string]*catalog.Resource, open opener) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		want := files[p]
		rep.BytesChecked++
		if reason := checkFile(p, want, open); reason != "" {
			rep.WrongBytes = append(rep.WrongBytes, WrongBytes{Path: p, URI: want.URI, Reason: reason})
		}
	}
}

// checkFile reads one file and says how it is wrong; "" when it is right.
func checkFile(p string, want *catalog.Resource, open opener) string {
	body, err := open(p, want)
	if err != nil {
		return "could not be read: " + err.Error()
	}
	defer body.Close()
	hashers := map[string]hash.Hash{}
	writers := []io.Writer{io.Discard}
	for _, h := range want.Hashes {
		if i := resourcesync.HashAlgIndex(h.Alg); i >= 0 && hashers[h.Alg] == nil {
			hashers[h.Alg] = resourcesync.HashAlgs()[i].New()
			writers = append(writers, hashers[h.Alg])
		}
	}
	n, err := io.Copy(io.MultiWriter(writers...), body)
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
