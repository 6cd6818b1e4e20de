package prefetch

import (
	"fmt"
	"io"
	"time"

	"rsfs/report"
)

// WriteText writes what the job did for path, as `rsfs warm` says it: one
// line, then each file not fetched. diskFlag is how the user names the
// disk cache's bound; explain words the job's error for the user.
func (j *Job) WriteText(w io.Writer, path, diskFlag string, explain func(string) string) {
	if j.Error != "" {
		if j.Needs > 0 {
			fmt.Fprintf(w, "%s: %d files, %s, do not fit %s %s: it needs %s more; nothing fetched\n",
				path, j.Files, report.Size(j.Bytes), diskFlag, report.Size(j.DiskMax), report.Size(j.Needs))
		} else {
			fmt.Fprintf(w, "%s: %s; nothing fetched\n", path, explain(j.Error))
		}
		return
	}
	onDisk := j.Files - j.FailedCount
	fmt.Fprintf(w, "%s: %d of %d files on disk (%s): %d fetched (%s), %d were on disk already, %d failed, in %s\n",
		path, onDisk, j.Files, report.Size(j.DoneBytes), j.FetchedFiles, report.Size(j.FetchedBytes),
		j.OnDiskFiles, j.FailedCount, time.Duration(j.Took*float64(time.Second)).Round(10*time.Millisecond))
	for _, f := range j.Failed {
		fmt.Fprintf(w, "  not fetched: %s: %s\n", f.Path, f.Error)
	}
	if n := j.FailedCount - len(j.Failed); n > 0 {
		fmt.Fprintf(w, "  and %d more not fetched (the mount's log names each)\n", n)
	}
}

// WriteText writes what a release under path did, as `rsfs warm
// --release` says it.
func (r *Released) WriteText(w io.Writer, path string) {
	fmt.Fprintf(w, "%s: released %d files (%s); they age out of the disk cache as any others\n", path, r.Files, report.Size(r.Bytes))
}
