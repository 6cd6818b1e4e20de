package source

import (
	"sync"

	"rsfs/resourcesync"
)

// Reads are the Change Dumps (and indexes) and the dump packages a load
// read, with what each held or why it could not be read: a walk in the
// same use (Truth's, after its LoadEach) reads them from here, so that
// every document is asked for once.
type Reads struct {
	mu   sync.Mutex
	docs map[string]docRead
	pkgs map[string]pkgRead
}

type docRead struct {
	doc *resourcesync.Document
	err error
}

type pkgRead struct {
	p   *PackageRead
	err error
}

func (r *Reads) noteDoc(u string, doc *resourcesync.Document, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.docs == nil {
		r.docs = map[string]docRead{}
	}
	r.docs[u] = docRead{doc, err}
}

func (r *Reads) notePackage(u string, p *PackageRead, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pkgs == nil {
		r.pkgs = map[string]pkgRead{}
	}
	r.pkgs[u] = pkgRead{p, err}
}

// Doc returns the document the load read at u, or why it could not; ok
// false when the load did not ask for it. Nil Reads holds nothing.
func (r *Reads) Doc(u string) (doc *resourcesync.Document, ok bool, err error) {
	if r == nil {
		return nil, false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.docs[u]
	return d.doc, ok, d.err
}

// Package returns the package the load read at u (ReadPackage), or why it
// could not; ok false when the load did not ask for it.
func (r *Reads) Package(u string) (p *PackageRead, ok bool, err error) {
	if r == nil {
		return nil, false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.pkgs[u]
	return d.p, ok, d.err
}

// take returns the package the load read at u, and forgets it: ok false
// when the load did not ask for it (or it was taken).
func (r *Reads) take(u string) (p *PackageRead, ok bool, err error) {
	if r == nil {
		return nil, false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.pkgs[u]
	delete(r.pkgs, u)
	return d.p, ok, d.err
}

// TakeLoadedPackage returns the package at u as the first load (Load) read
// it (ReadPackage), once: the catch-up poll that follows a load walks the
// Change Dumps' packages from what the load read, so a fresh mount reads
// each manifest once. ok false: read it (ReadPackage).
func (s *Source) TakeLoadedPackage(u string) (p *PackageRead, ok bool, err error) {
	return s.loaded.Load().take(u)
}

// ForgetLoad drops what the first load read (once the catch-up poll has
// walked, whatever it took).
func (s *Source) ForgetLoad() { s.loaded.Store(nil) }
