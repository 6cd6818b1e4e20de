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
	DefaultFillTimeout               = 2 * time.Minute
	DefaultPrefetchConcurrency       = 8
	DefaultDiskMaxBytes        int64 = 10 << 30
)

// Config tunes a Cache. Zero fields take the defaults above.
type Config struct {
	// MaxBytes bounds the bytes of cached blocks.
	MaxBytes int64
	// BlockSize is the size of an aligned block.
	BlockSize int
	// ReadAhead is how many blocks are prefetched ahead of a sequential
	// reader; a negative value disables prefetching.
	ReadAhead int
	// FillTimeout bounds one fill, and each block read from a stream that
	// continues past the requested block.
	FillTimeout time.Duration
	// PrefetchConcurrency bounds the prefetch fills running at once across
	// the whole Cache.
	PrefetchConcurrency int
	// Logger receives integrity failures; nil means slog.Default().
	Logger *slog.Logger
	// DiskDir holds a disk cache of blocks under the memory one; "" means
	// no disk cache. One process at a time may use a directory.
	DiskDir string
	// DiskMaxBytes bounds the bytes of the block files in DiskDir.
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
	if cfg.FillTimeout <= 0 {
		cfg.FillTimeout = DefaultFillTimeout
	}
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
