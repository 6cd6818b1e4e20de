// Package prefetch fetches what readers of a mount will ask for before
// they ask: it predicts walks over the catalog and fills the cache, with
// no FUSE in it. Package fs, the FUSE edge, tells it what readers do and
// answers them; rclone keeps read-ahead in its vfs layer and its mount a
// thin adapter alike.
//
//   - Windows (warm.go, treeorder.go, window.go): reading a small file
//     warms the small files after it in the tree's depth-first order, the
//     order grep -r, tar, rsync and restic read in, a fill sized from the
//     network measured, refilled as the reader passes its middle.
//   - Jobs (jobs.go): `rsfs warm PATH` fills the disk cache with every
//     file under PATH and pins it there.
//   - Lengths (lengths.go): a file its list gave no length is learned when
//     a lookup needs it, one request however many wait, and in the
//     background in tree order once the mount serves.
//
// Every request goes through the Fetcher, Batch and Length it is handed,
// so through the Source's per-origin pacer; background ones give way to
// any a reader waits on (package priority).
package prefetch
