package sourcetest

import (
	"fmt"
	"strings"
)

// awkwardKeys are the request targets of the awkward resources served at
// the primary's own host form.
var awkwardKeys = []string{
	"/awkward/with%20space.txt",
	"/awkward/caf%C3%A9.txt",
	"/awkward/a%2Fb.txt",
	"/awkward/q.cgi?id=1&x=2",
	"/awkward/q.cgi?id=2",
	"/awkward/dir/",
	"/awkward/both",
	"/awkward/both/child.txt",
	"/awkward/" + strings.Repeat("L", 296) + ".txt",
	"/awkward/Case.txt",
	"/awkward/case.txt",
	"/awkward/./dots/../dotted.txt",
}

// otherHostKey is the awkward resource published under http://localhost:PORT/.
const otherHostKey = "/awkward/otherhost.txt"

// addAwkward publishes the awkward resources in the first set, as part of
// the initial state (no Change List entries).
func (s *Source) addAwkward() {
	add := func(key, uri string) {
		r := &resState{key: key, uri: uri, gen: -1, typ: textType, lastmod: s.startAt}
		body := fmt.Sprintf("awkward resource %s\nkey %s\n", uri, key)
		r.setContent(s.cfg.Seed, s.cfg.Hashes, []byte(body), s.cfg.MinSize, s.cfg.MaxSize)
		s.addExplicitLocked(r, 0)
		s.awkward = append(s.awkward, uri)
		s.live++
	}
	for _, k := range awkwardKeys {
		add(k, s.base+k[1:])
	}
	add(otherHostKey, s.localBase+otherHostKey[1:])
}
