package source

import "rsfs/fetch"

// Client returns the HTTP client the Source reads with, for its counters.
func (s *Source) Client() *fetch.Client { return s.opts.Client }
