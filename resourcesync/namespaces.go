package resourcesync

import "strings"

// nsID identifies the namespaces this package knows.
type nsID uint8

const (
	nsNone nsID = iota
	nsSitemap
	nsRS
	nsXML
	nsOther
)

const xmlNS = "http://www.w3.org/XML/1998/namespace"

type nsBinding struct {
	prefix string
	id     nsID
	uri    string
	depth  int
}

// namespaces is the stack of in-scope prefix bindings.
type namespaces struct{ bindings []nsBinding }

// enter records the xmlns attributes of a start tag at depth.
func (n *namespaces) enter(attrs []rawAttr, depth int) {
	for _, a := range attrs {
		switch {
		case len(a.prefix) == 0 && string(a.local) == "xmlns":
			n.bind("", a.value, depth)
		case string(a.prefix) == "xmlns" && string(a.local) != "xml" && string(a.local) != "xmlns":
			n.bind(string(a.local), a.value, depth)
		}
	}
}

func (n *namespaces) bind(prefix string, uri []byte, depth int) {
	b := nsBinding{prefix: prefix, depth: depth}
	switch string(uri) {
	case "":
		b.id = nsNone
	case SitemapNS:
		b.id, b.uri = nsSitemap, SitemapNS
	case RSNS:
		b.id, b.uri = nsRS, RSNS
	default:
		b.id, b.uri = nsOther, string(uri)
	}
	n.bindings = append(n.bindings, b)
}

// leave drops the bindings of elements deeper than depth.
func (n *namespaces) leave(depth int) {
	for len(n.bindings) > 0 && n.bindings[len(n.bindings)-1].depth > depth {
		n.bindings = n.bindings[:len(n.bindings)-1]
	}
}

// lookup resolves a prefix ("" for the default namespace).
func (n *namespaces) lookup(prefix []byte) (id nsID, uri string, ok bool) {
	for i := len(n.bindings) - 1; i >= 0; i-- {
		if n.bindings[i].prefix == string(prefix) {
			return n.bindings[i].id, n.bindings[i].uri, true
		}
	}
	switch string(prefix) {
	case "":
		return nsNone, "", true
	case "xml":
		return nsXML, xmlNS, true
	}
	return nsNone, "", false
}

// looksLikeRS reports whether uri is a mistyped ResourceSync namespace, so
// that rs:md in it is an error rather than a foreign element.
func looksLikeRS(uri string) bool {
	return strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(uri, "https://"), "http://"),
		"www.openarchives.org/rs")
}
