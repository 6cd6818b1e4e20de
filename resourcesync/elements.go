package resourcesync

import (
	"fmt"
	"io"
)

// elemKind is what an element means to this package.
type elemKind uint8

const (
	elOther elemKind = iota
	elURLSet
	elSitemapIndex
	elURL
	elSitemap
	elLoc
	elLastmod
	elChangefreq
	elMD
	elLN
)

// element classifies the current start tag by namespace and local name.
func (r *Reader) element() (elemKind, error) {
	id, uri, ok := r.ns.lookup(r.sc.prefix)
	if !ok {
		return 0, r.errorHere(fmt.Sprintf("undeclared namespace prefix %q", r.sc.prefix), ErrNamespace)
	}
	local := r.sc.local
	isRSName := string(local) == "md" || string(local) == "ln"
	switch id {
	case nsRS:
		switch string(local) {
		case "md":
			return elMD, nil
		case "ln":
			return elLN, nil
		}
		return elOther, nil
	case nsSitemap:
		return sitemapElement(local), r.checkRSName(isRSName, SitemapNS)
	case nsNone, nsOther:
		if isRSName && (id == nsNone || looksLikeRS(uri)) {
			return 0, r.checkRSName(true, uri)
		}
	}
	return elOther, nil
}

func (r *Reader) checkRSName(isRSName bool, uri string) error {
	if !isRSName {
		return nil
	}
	if uri == "" {
		uri = "no namespace"
	}
	return r.errorHere(fmt.Sprintf("<%s> in %s; want namespace %s", r.sc.local, uri, RSNS), ErrNamespace)
}

func sitemapElement(local []byte) elemKind {
	switch string(local) {
	case "url":
		return elURL
	case "sitemap":
		return elSitemap
	case "loc":
		return elLoc
	case "lastmod":
		return elLastmod
	case "changefreq":
		return elChangefreq
	case "urlset":
		return elURLSet
	case "sitemapindex":
		return elSitemapIndex
	}
	return elOther
}

// readRoot reads up to the root element and checks it.
func (r *Reader) readRoot() error {
	for {
		if err := r.next(); err != nil {
			return err
		}
		if r.sc.kind == tokStart {
			break
		}
	}
	id, uri, ok := r.ns.lookup(r.sc.prefix)
	if !ok {
		return r.errorHere(fmt.Sprintf("undeclared namespace prefix %q on the root element", r.sc.prefix), ErrNamespace)
	}
	local := string(r.sc.local)
	if local != "urlset" && local != "sitemapindex" {
		return r.errorHere(fmt.Sprintf("root element <%s> is neither urlset nor sitemapindex", local), ErrStructure)
	}
	if id != nsSitemap {
		if uri == "" {
			uri = "no namespace"
		}
		return r.errorHere(fmt.Sprintf("root element <%s> in %s; want namespace %s", local, uri, SitemapNS), ErrNamespace)
	}
	r.header.Root = URLSet
	if local == "sitemapindex" {
		r.header.Root = SitemapIndex
	}
	return nil
}

// readHeader reads the root element and its rs:md and rs:ln up to the first
// entry or the end of the document.
func (r *Reader) readHeader() error {
	if err := r.readRoot(); err != nil {
		return err
	}
	for {
		kind, err := r.rootChild()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		switch kind {
		case elURL, elSitemap:
			r.pending = true
			return r.checkCapability()
		case elMD:
			if r.headerMD {
				if err := r.readMoreMD(&r.header.MD); err != nil {
					return err
				}
				continue // readMoreMD skipped past it
			}
			r.headerMD = true
			r.dev.mdLine, _ = r.sc.position(r.sc.tokOff)
			if err := r.readMD(&r.header.MD); err != nil {
				return err
			}
		case elLN:
			l, err := r.readLink()
			if err != nil {
				return err
			}
			r.header.Links = append(r.header.Links, l)
		}
		if err := r.skip(); err != nil {
			return err
		}
	}
}

func (r *Reader) checkCapability() error {
	if c := r.header.MD.Capability; c != "" && !c.Known() {
		r.warnHere(warnUnknownCapability, string(c))
	}
	r.checkHeader()
	return nil
}

// rootChild reads to the next start tag directly inside the root and
// classifies it. At the root's end it checks the rest of the document and
// returns io.EOF.
func (r *Reader) rootChild() (elemKind, error) {
	for {
		r.sc.skipPlainText()
		if err := r.next(); err != nil {
			return 0, err
		}
		switch r.sc.kind {
		case tokStart:
			kind, err := r.element()
			if err != nil {
				return 0, err
			}
			if err := r.checkEntryKind(kind); err != nil {
				return 0, err
			}
			return kind, nil
		case tokEnd:
			return 0, r.finish()
		}
	}
}

// checkEntryKind rejects <url> in a sitemapindex and <sitemap> in a urlset.
func (r *Reader) checkEntryKind(kind elemKind) error {
	if (kind == elURL && r.header.Root == SitemapIndex) || (kind == elSitemap && r.header.Root == URLSet) {
		return r.errorHere(fmt.Sprintf("<%s> inside <%s>", r.sc.local, r.header.Root), ErrStructure)
	}
	return nil
}

// finish reads past the root element to the end of input, which must hold
// only comments, processing instructions and whitespace.
func (r *Reader) finish() error {
	r.checkCapability()
	r.checkEnd()
	for {
		if err := r.next(); err != nil {
			return err
		}
		if r.sc.kind == tokEOF {
			r.done = true
			return io.EOF
		}
	}
}

// skip reads to the end of the element whose start tag was just read.
func (r *Reader) skip() error {
	depth := r.sc.depth()
	for r.sc.depth() >= depth {
		if err := r.next(); err != nil {
			return err
		}
	}
	return nil
}

// readText returns the character data of the element whose start tag was
// just read, trimmed of surrounding whitespace; child elements are skipped.
// The result is valid until the next call.
func (r *Reader) readText() ([]byte, error) {
	if text, ok := r.sc.elementTextFast(); ok {
		r.ns.leave(r.sc.depth())
		return trimSpace(text), nil
	}
	depth := r.sc.depth()
	r.text = r.text[:0]
	for {
		if err := r.next(); err != nil {
			return nil, err
		}
		switch {
		case r.sc.depth() < depth:
			return trimSpace(r.text), nil
		case r.sc.kind == tokText && r.sc.depth() == depth:
			if len(r.text)+len(r.sc.text) > r.opts.MaxTokenBytes {
				return nil, r.errorHere(fmt.Sprintf("an element's text longer than %d bytes", r.opts.MaxTokenBytes), ErrTooLarge)
			}
			r.text = append(r.text, r.sc.text...)
		}
	}
}
