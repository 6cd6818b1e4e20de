package catalog

import (
	"encoding/binary"
	"rsfs/resourcesync"
	"strings"
)

// RelName is the name a link relation has in a file's extended attributes
// (user.<protocol>.link.<name>, served by fs): a relation that is a URI is
// named by its last path segment or fragment
// (http://www.openarchives.org/rs/terms/patch → patch), a registered one
// in lower case (RFC 8288 compares them case-insensitively); "" for a
// relation that cannot name an attribute.
func RelName(rel string) string {
	rel = strings.TrimSpace(rel)
	if isURIRel(rel) {
		rel = strings.TrimRight(rel, "/#")
		if i := strings.LastIndexAny(rel, "/#:"); i >= 0 {
			rel = rel[i+1:]
		}
	} else {
		rel = strings.ToLower(rel)
	}
	if rel == "" || strings.ContainsAny(rel, "\x00 \t\n\r") {
		return ""
	}
	return rel
}

// isURIRel reports whether rel is an extension relation, a URI (RFC 8288
// §2.1.2): a scheme followed by ':'.
func isURIRel(rel string) bool {
	i := strings.IndexByte(rel, ':')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := rel[j]
		letter := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// A resource's links are one blob in the arena (fileRec.links, 0 for
// none), so a resource without links costs nothing and one with links
// costs their bytes, no pointers: the uvarint length of the rest, the
// uvarint count of links, and per link: rel and href (each a uvarint
// length and bytes), a byte of flags saying which of the rest follow: pri
// (uvarint), length (uvarint), modified (varint Unix nanoseconds, varint
// zone minutes), type, path (strings), hashes (uvarint count, then alg and
// value strings each). Links are copied in, so the catalog never holds a
// document reader's buffers.
const (
	linkPri byte = 1 << iota
	linkLength
	linkModified
	linkType
	linkPath
	linkHashes
	linkFlagsAll = linkPri | linkLength | linkModified | linkType | linkPath | linkHashes
)

// appendLinks packs ls onto dst; no links append nothing.
func appendLinks(dst []byte, ls []Link) []byte {
	if len(ls) == 0 {
		return dst
	}
	body := binary.AppendUvarint(nil, uint64(len(ls)))
	for i := range ls {
		l := &ls[i]
		body = appendLinkString(body, l.Rel)
		body = appendLinkString(body, l.Href)
		var flags byte
		if l.Pri > 0 {
			flags |= linkPri
		}
		if l.Length >= 0 {
			flags |= linkLength
		}
		if !l.Modified.IsZero() {
			flags |= linkModified
		}
		if l.Type != "" {
			flags |= linkType
		}
		if l.Path != "" {
			flags |= linkPath
		}
		if len(l.Hashes) > 0 {
			flags |= linkHashes
		}
		body = append(body, flags)
		if flags&linkPri != 0 {
			body = binary.AppendUvarint(body, uint64(l.Pri))
		}
		if flags&linkLength != 0 {
			body = binary.AppendUvarint(body, uint64(l.Length))
		}
		if flags&linkModified != 0 {
			body = binary.AppendVarint(body, timeNanos(l.Modified))
			body = binary.AppendVarint(body, int64(zoneMinutes(l.Modified)))
		}
		if flags&linkType != 0 {
			body = appendLinkString(body, l.Type)
		}
		if flags&linkPath != 0 {
			body = appendLinkString(body, l.Path)
		}
		if flags&linkHashes != 0 {
			body = binary.AppendUvarint(body, uint64(len(l.Hashes)))
			for _, h := range l.Hashes {
				body = appendLinkString(body, h.Alg)
				body = appendLinkString(body, h.Value)
			}
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(body)))
	return append(dst, body...)
}

func appendLinkString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// linksBlob returns the blob at the start of b (its length prefix
// included), or false if b does not hold a whole one.
func linksBlob(b []byte) ([]byte, bool) {
	n, h := binary.Uvarint(b)
	if h <= 0 || n > uint64(len(b)-h) {
		return nil, false
	}
	return b[:h+int(n)], true
}

// decodeLinks unpacks a blob written by appendLinks; false if it is not
// one (a damaged snapshot).
func decodeLinks(blob []byte) ([]Link, bool) {
	b, ok := linksBlob(blob)
	if !ok {
		return nil, false
	}
	d := linkDec{b: b}
	d.uvarint() // the length, checked above
	n := d.uvarint()
	if n == 0 || n > uint64(len(b)) { // every link takes at least 3 bytes
		return nil, false
	}
	out := make([]Link, n)
	for i := range out {
		l := &out[i]
		l.Rel, l.Href = d.str(), d.str()
		flags := d.byte()
		if flags&^linkFlagsAll != 0 {
			return nil, false
		}
		l.Length = resourcesync.NoLength
		if flags&linkPri != 0 {
			l.Pri = int(min(d.uvarint(), 1<<31))
		}
		if flags&linkLength != 0 {
			l.Length = int64(min(d.uvarint(), 1<<62))
		}
		if flags&linkModified != 0 {
			nanos, zone := d.varint(), d.varint()
			if nanos == noTime || zone < -24*60 || zone > 24*60 {
				return nil, false
			}
			l.Modified = lastmod(nanos, int16(zone))
		}
		if flags&linkType != 0 {
			l.Type = d.str()
		}
		if flags&linkPath != 0 {
			l.Path = d.str()
		}
		if flags&linkHashes != 0 {
			nh := d.uvarint()
			if nh == 0 || nh > uint64(len(b)) {
				return nil, false
			}
			l.Hashes = make([]resourcesync.Hash, nh)
			for j := range l.Hashes {
				l.Hashes[j] = resourcesync.Hash{Alg: d.str(), Value: d.str()}
			}
		}
		if d.bad {
			return nil, false
		}
	}
	return out, !d.bad && d.pos == len(b)
}

// linkDec reads a links blob; bad is set on any read past its end.
type linkDec struct {
	b   []byte
	pos int
	bad bool
}

func (d *linkDec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b[min(d.pos, len(d.b)):])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.pos += n
	return v
}

func (d *linkDec) varint() int64 {
	v, n := binary.Varint(d.b[min(d.pos, len(d.b)):])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.pos += n
	return v
}

func (d *linkDec) byte() byte {
	if d.pos >= len(d.b) {
		d.bad = true
		return 0
	}
	d.pos++
	return d.b[d.pos-1]
}

func (d *linkDec) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)-d.pos) {
		d.bad = true
		return ""
	}
	s := string(d.b[d.pos : d.pos+int(n)])
	d.pos += int(n)
	return s
}
