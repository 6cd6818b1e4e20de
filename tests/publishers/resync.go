package publishers

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Resync publishes as the resync-simulator (resync/resync-simulator:
// simulator/source.py, changememory.py and http.py) does in ResourceSync
// 1.0 mode with the resync library before v1.0.6 (resync/sitemap.py's
// resources_as_xml, resync/hashes.py, resync/w3c_datetime.py's
// datetime_to_str, at commit 941cba4^): an md5 in base64, times with
// microseconds, ElementTree's output on one line with the attributes
// sorted (Python 2.7), <rs:ln> before <rs:md>, the Resource List sorted by
// URI (so not by time), and a Change List of every change event in the
// order they happened: the same <loc> again for each change to one
// resource, created and updated dated by their lastmod, a deletion with
// none, from the first change's time and until "now" at each request.
type Resync struct {
	*server
	mu      sync.Mutex
	res     map[string]resyncRes
	changes []resyncChange
	next    int
}

type resyncRes struct {
	ts   time.Time // microseconds
	body []byte
}

type resyncChange struct {
	basename string
	change   string
	res      resyncRes // zero for a deletion
}

// NewResync starts a simulator with n resources, created over the last
// hour.
func NewResync(n int) (*Resync, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	r := &Resync{server: s, res: map[string]resyncRes{}}
	base := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		r.res[strconv.Itoa(r.next)] = r.newRes(base.Add(time.Duration(i) * 1234567 * time.Microsecond))
		r.next++
	}
	r.publish()
	return r, nil
}

func (r *Resync) newRes(t time.Time) resyncRes {
	t = t.Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		t = t.Add(time.Microsecond) // datetime_to_str writes the fraction only when there is one
	}
	n := r.next*37%200 + t.Nanosecond()%50
	return resyncRes{ts: t, body: bytes.Repeat([]byte{byte('a' + r.next%26)}, n)}
}

// Simulate makes changes as simulate_changes does: each basename given is
// updated if it exists, else created; each in del is deleted.
func (r *Resync) Simulate(update []string, create int, del []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range update {
		r.res[b] = r.newRes(time.Now())
		r.changes = append(r.changes, resyncChange{basename: b, change: "updated", res: r.res[b]})
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < create; i++ {
		b := strconv.Itoa(r.next)
		r.next++
		r.res[b] = r.newRes(time.Now())
		r.changes = append(r.changes, resyncChange{basename: b, change: "created", res: r.res[b]})
		time.Sleep(time.Millisecond)
	}
	for _, b := range del {
		delete(r.res, b)
		r.changes = append(r.changes, resyncChange{basename: b, change: "deleted"})
	}
	r.publish()
}

func md5base64(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// pyDate is datetime_to_str: isoformat with microseconds when there is a
// fraction, and a Z.
func pyDate(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05") + "Z"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "Z"
}

const resyncHead = `<?xml version='1.0' encoding='UTF-8'?>` + "\n" +
	`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`

func (r *Resync) entry(b *bytes.Buffer, basename, change string, res resyncRes) {
	fmt.Fprintf(b, "<url><loc>%s/resources/%s</loc>", r.URL(), basename)
	if change == "deleted" {
		fmt.Fprintf(b, `<rs:md change="deleted" /></url>`)
		return
	}
	fmt.Fprintf(b, "<lastmod>%s</lastmod><rs:md ", pyDate(res.ts))
	if change != "" {
		fmt.Fprintf(b, `change="%s" `, change)
	}
	fmt.Fprintf(b, `hash="md5:%s" length="%d" /></url>`, md5base64(res.body), len(res.body))
}

func (r *Resync) publish() {
	root := r.URL()
	r.setDoc("/.well-known/resourcesync", []byte(resyncHead+`<rs:ln href="`+root+`" rel="describedby" /><rs:md capability="description" /><url><loc>`+root+`/capabilitylist.xml</loc><rs:md capability="capabilitylist" /></url></urlset>`))
	r.setDoc("/capabilitylist.xml", []byte(resyncHead+`<rs:ln href="`+root+`" rel="describedby" /><rs:ln href="`+root+`/.well-known/resourcesync" rel="up" /><rs:md capability="capabilitylist" /><url><loc>`+root+`/resourcelist.xml</loc><rs:md capability="resourcelist" /></url><url><loc>`+root+`/changelist.xml</loc><rs:md capability="changelist" /></url></urlset>`))
	names := make([]string, 0, len(r.res))
	for b := range r.res {
		names = append(names, root+"/resources/"+b)
	}
	sort.Strings(names) // ResourceListDict iterates sorted(keys()): by URI
	var b bytes.Buffer
	b.WriteString(resyncHead)
	fmt.Fprintf(&b, `<rs:md at="%s" capability="resourcelist" />`, pyDate(time.Now()))
	for _, u := range names {
		base := u[len(root+"/resources/"):]
		r.entry(&b, base, "", r.res[base])
	}
	b.WriteString("</urlset>")
	r.setDoc("/resourcelist.xml", b.Bytes())
	b.Reset()
	b.WriteString(resyncHead)
	b.WriteString(`<rs:md capability="changelist"`)
	if len(r.changes) > 0 {
		fmt.Fprintf(&b, ` from="%s"`, pyDate(r.changes[0].res.ts)) // a deletion first has no time: None is left out
	}
	fmt.Fprintf(&b, ` until="%s" />`, pyDate(time.Now()))
	for _, c := range r.changes {
		r.entry(&b, c.basename, c.change, c.res)
	}
	b.WriteString("</urlset>")
	r.setDoc("/changelist.xml", b.Bytes())
	for p := range r.state() {
		r.setFile(p, nil)
	}
	for base, res := range r.res {
		r.setFile("/resources/"+base, &File{Body: res.body, Lastmod: res.ts.Truncate(time.Second)})
	}
}

// State is what a mount must show.
func (r *Resync) State() map[string]File { return r.state() }
