package sourcetest

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"rsfs/resourcesync"
)

// Resource is a resource as the Source publishes it.
type Resource struct {
	URI     string
	Size    int64
	Lastmod time.Time
	Hashes  []resourcesync.Hash
	Type    string
	Deleted bool
}

// genBase is the origin of generated lastmods: they fall in the year after it.
var genBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const textType = "text/plain"

// resState is one resource that exists as a record: every explicit resource
// (awkward, created) and every generated resource that was changed. An
// unchanged generated resource has no record; lookups make a transient one.
type resState struct {
	key     string // canonical request target, e.g. /data/d000/r000001.txt
	uri     string // the URI as published
	set     int
	gen     int   // generated index, or -1
	version int64 // 0 for the original; else the change sequence number
	content []byte
	size    int64
	lastmod time.Time
	digests []byte // raw digests of the body, nil until computed
	etag    string
	typ     string
	deleted bool
	corrupt []byte // served at the primary instead of the body, when set
	fail    int    // HTTP status the primary answers, when set
}

// generatedBody returns the generated body, valid when content is nil.
func (r *resState) generatedBody(seed int64) genBody {
	return genBody{key: bodyKey(seed, r.gen, r.version), size: r.size}
}

// reader returns a reader over the true body.
func (r *resState) reader(seed int64) io.ReadSeeker {
	if r.content != nil {
		return bytes.NewReader(r.content)
	}
	return r.generatedBody(seed).reader()
}

// bodyBytes returns the true body.
func (r *resState) bodyBytes(seed int64) []byte {
	if r.content != nil {
		return bytes.Clone(r.content)
	}
	return r.generatedBody(seed).bytes()
}

// setContent gives the record explicit content (nil selects the generated
// body of the current version) and refreshes its size, digests and ETag.
func (r *resState) setContent(seed int64, algs []string, content []byte, minSize, maxSize int64) {
	if content == nil && r.gen >= 0 {
		r.content = nil
		key := bodyKey(seed, r.gen, r.version)
		r.size = generatedSize(key, minSize, maxSize)
		r.digests = genDigests(algs, r.generatedBody(seed))
		r.etag = genETag(seed, r.gen, r.version)
		return
	}
	r.content = bytes.Clone(content)
	if r.content == nil {
		r.content = []byte{}
	}
	r.size = int64(len(r.content))
	r.digests = bytesDigests(algs, r.content)
	sum := md5.Sum(r.content)
	r.etag = `"c` + hex.EncodeToString(sum[:12]) + `"`
}

func genETag(seed int64, i int, v int64) string {
	return fmt.Sprintf(`"g%x-%d-%d"`, uint64(seed), i, v)
}

// public returns the record as a Resource.
func (r *resState) public(algs []string) Resource {
	return Resource{URI: r.uri, Size: r.size, Lastmod: r.lastmod, Hashes: toHashes(algs, r.digests),
		Type: r.typ, Deleted: r.deleted}
}

// genNames formats and parses the paths of generated resources.
type genNames struct {
	dirDigits, fileDigits int
	fanOut                int // Config.FanOut
}

func newGenNames(n, fanOut int) genNames {
	return genNames{dirDigits: max(3, digits(n/100)), fileDigits: max(6, digits(n)), fanOut: fanOut}
}

func digits(n int) int { return len(strconv.Itoa(max(n-1, 0))) }

// key is the request target of generated resource i.
func (g genNames) key(i int) string {
	if g.fanOut > 0 {
		j := i % g.fanOut
		return fmt.Sprintf("/data/d%03d/s%03d/r%0*d.txt", j/100, j%100, g.fileDigits, i)
	}
	return fmt.Sprintf("/data/d%0*d/r%0*d.txt", g.dirDigits, i/100, g.fileDigits, i)
}

// parse returns the generated index a key names, if it names one.
func (g genNames) parse(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, "/data/d")
	if !ok {
		return 0, false
	}
	slash := strings.LastIndexByte(rest, '/')
	if slash < 0 || !strings.HasPrefix(rest[slash:], "/r") || !strings.HasSuffix(rest, ".txt") {
		return 0, false
	}
	i, err := strconv.Atoi(rest[slash+2 : len(rest)-len(".txt")])
	if err != nil || i < 0 || g.key(i) != key {
		return 0, false
	}
	return i, true
}

// genLastmod is the lastmod of the original version of generated resource i.
func genLastmod(seed int64, i int) time.Time {
	secs := mix64(uint64(seed)^uint64(i)*golden) % (365 * 86400)
	return genBase.Add(time.Duration(secs) * time.Second)
}
