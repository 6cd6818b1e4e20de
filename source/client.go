package source

import (
	"log/slog"

	"rsfs/fetch"
)

// Client returns the HTTP client the Source reads with, for its counters.
func (s *Source) Client() *fetch.Client { return s.opts.Client }

// Logger returns the logger the Source logs to (Options.Logger, else the
// default).
func (s *Source) Logger() *slog.Logger { return s.log }
