// Package cache holds content blocks in a byte-bounded memory LRU and reads
// open files through it.
//
// A Cache stores aligned blocks of contents keyed by content identity (a
// version token) and block index. Misses are filled once however many readers
// wait (in-flight fills are shared), on a context detached from any single
// reader. A File reads one Content through the Cache from a Fetcher it is
// handed: it checks lengths on every fill, verifies the published hash of
// contents up to Config.VerifyWholeBelow before handing out a byte (trying
// each copy an Alternates fetcher has) and of larger ones when a whole read
// passes through, remembers a version no copy of which verifies as bad
// (its reads fail until a new version), fails every later read of a File
// that met bad bytes or a version gone, prefetches ahead of sequential
// readers, and makes the most of servers that ignore Range requests.
//
// Under the memory LRU an optional disk cache (Config.DiskDir) keeps blocks
// across restarts: one checksummed file per block, written in the
// background by rename, bounded by DiskMaxBytes with LRU eviction whose
// order survives restarts (file modification times). A memory miss reads
// the disk before the fetcher; a file that fails its checks is deleted and
// refetched, never served. Warm and WarmBatch fetch small contents at low
// priority that a caller (package prefetch: the files after an opened one
// in the tree) expects a reader to open next.
//
// The package knows neither HTTP nor FUSE.
package cache
