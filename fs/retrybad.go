package fs

// RetryBad lets every version that failed verification be fetched and
// verified again at its next read (cache.Cache.RetryBad): the mount calls
// it after each poll, so a version that failed through a shared cache
// since fixed reads again at the latest one poll later.
func (f *FS) RetryBad() { f.cfg.Cache.RetryBad() }
