package cache

import (
	"log/slog"
	"time"
)

// Defaults used for zero Config fields.
const (
	DefaultMaxBytes            int64 = 256 << 20
	DefaultBlockSize                 = 1 << 20
	DefaultReadAhead                 = 4
	DefaultPrefetchConcurrency       = 8
	DefaultDiskMaxBytes        int64 = 10 << 30
	// DefaultVerifyWholeBelow: contents up to this size (with a published
	// hash) are verified whole before their first byte is served. Measured
	// (docs/verification.md): head -c1 of a 16 MiB file then takes
	// tens of milliseconds on a fast link.
	DefaultVerifyWholeBelow int64 = 16 << 20
)

// Config tunes a Cache. Zero fields take the defaults above.
type Config struct {
	// MaxBytes bounds the bytes of cached blocks.
	MaxBytes int64
	// BlockSize is the size of an aligned block.
	BlockSize int
	// ReadAhead sets how far a sequential reader is read ahead: its stream
	// keeps max(4×ReadAhead, 16) blocks filled ahead of it (at most a
	// quarter of the cache, stream.go), or, where the next missing block is
	// on disk, ReadAhead blocks are prefetched one by one (one where the
	// Fetcher ignores Range). A negative value disables reading ahead.
	ReadAhead int
	// FillTimeout, if positive, bounds one fill, and each block read from a
	// stream that continues past the requested block. Zero means no bound
	// here: the Fetcher bounds its own transfers (rsfs's HTTP client fails a
	// stalled one, see fetch.Options.MinRate).
	FillTimeout time.Duration
	// VerifyWholeBelow: a content of more than one block with a published
	// hash and at most this many bytes is read and verified whole before
	// its first byte is served; larger ones are streamed (length checked,
	// hash verified when a whole read passes through). Zero means
	// DefaultVerifyWholeBelow, negative never; at most MaxBytes/4.
	VerifyWholeBelow int64
	// PrefetchConcurrency bounds the prefetch fills running at once across
	// the whole Cache.
	PrefetchConcurrency int
	// WarmConcurrency, if set, says how many Warm fills may run at once
	// (asked each time Warm starts workers): the requests worth having in
	// flight to the Source, more where it speaks HTTP/2
	// (fetch.Client.InFlight). Nil means half of PrefetchConcurrency.
	WarmConcurrency func() int
	// Logger receives integrity failures; nil means slog.Default().
	Logger *slog.Logger
	// DiskDir holds a disk cache of blocks under the memory one; "" means
	// no disk cache. One process at a time may use a directory.
	DiskDir string
	// DiskMaxBytes bounds the bytes of the block files and packs in DiskDir.
	DiskMaxBytes int64
}

func (cfg Config) withDefaults() Config {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.BlockSize <= 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	if cfg.ReadAhead == 0 {
		cfg.ReadAhead = DefaultReadAhead
	}
	if cfg.ReadAhead < 0 {
		cfg.ReadAhead = 0
	}
	if cfg.VerifyWholeBelow == 0 {
		cfg.VerifyWholeBelow = DefaultVerifyWholeBelow
	}
	cfg.VerifyWholeBelow = min(cfg.VerifyWholeBelow, cfg.MaxBytes/4)
	if cfg.PrefetchConcurrency <= 0 {
		cfg.PrefetchConcurrency = DefaultPrefetchConcurrency
	}
	if cfg.DiskMaxBytes <= 0 {
		cfg.DiskMaxBytes = DefaultDiskMaxBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}
