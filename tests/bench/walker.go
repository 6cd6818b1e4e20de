package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// walker is a tool that reads every small file of a mount, in its own
// order. Its command reads DIR/data (DIR the mount point) and fails unless
// every file was read whole, so a short read is a failure, not a fast
// figure; SCRATCH is a directory of its own, emptied (and prepared by
// prep) before each timed walk.
type walker struct {
	name string
	desc string
	cmd  func(t *peerTree) string
	prep string // shell command run before the timing, SCRATCH replaced
	// mountOnly: the walker needs an rsfs mount (not run on the served
	// tree itself).
	mountOnly bool
}

const resticPassword = "RESTIC_PASSWORD=rsfs-bench"

var walkers = map[string]walker{
	"grep": {name: "grep -r", desc: "`grep -r -l` of the needle on every file's last line",
		cmd: func(t *peerTree) string { return grepCmd(t, "DIR/data") }},
	"rsync": {name: "rsync -a", desc: "`rsync -a` to a local directory (its file list first, then the files in sorted order per directory), the copy then checked",
		cmd: func(t *peerTree) string {
			return "rsync -a DIR/data/ SCRATCH/copy/ && " + grepCmd(t, "SCRATCH/copy")
		}},
	// GNU tar does not read the files when the archive is /dev/null (nor
	// when its standard output is), so the archive goes through a pipe.
	"tar": {name: "tar cf -", desc: "`tar cf - -C DIR data` into a pipe (GNU tar skips reading the files when the archive is /dev/null), the archive then unpacked to a pipe and its needles counted",
		cmd: func(t *peerTree) string {
			return fmt.Sprintf(`n=$(tar cf - -C DIR data | tar xOf - | grep -c %s) && test "$n" -eq %d || { echo "tar archived $n whole files, want %d" >&2; exit 1; }`,
				needle, t.small, t.small)
		}},
	"restic": {name: "restic backup", desc: "`restic backup --no-cache` to a local repository initialised before the timing, a fresh one for each walk, its summary's file count checked",
		cmd: func(t *peerTree) string {
			return fmt.Sprintf(`if ! out=$(%s restic --repo SCRATCH/repo --no-cache backup DIR/data 2> SCRATCH/err); then `+
				`echo "restic: $(grep -m 1 -v '^\s*$' SCRATCH/err | sed 's|/[^ :]*|FILE|')" >&2; exit 1; fi; `+
				`case "$out" in *'processed %d files,'*) ;; *) echo "restic did not process %d files: $out" >&2; exit 1;; esac`,
				resticPassword, t.small, t.small)
		},
		prep: resticPassword + " restic --repo SCRATCH/repo --no-cache init --quiet"},
}

// warmBin is the rsfs binary the "warm" walker runs (set by main).
var warmBin = "rsfs"

func init() {
	walkers["warm"] = walker{name: "rsfs warm", desc: "`rsfs warm DIR/data` (issue 40): every file into the disk cache, exit status 0 only when every one is on disk; the again column is a second warm after a remount",
		cmd: func(*peerTree) string { return warmBin + " warm DIR/data > /dev/null" }, mountOnly: true}
}

// parseWalkers reads -walkers' comma list.
func parseWalkers(s string) ([]walker, error) {
	var out []walker
	for _, f := range strings.Split(s, ",") {
		w, ok := walkers[strings.TrimSpace(f)]
		if !ok {
			return nil, fmt.Errorf("-walkers: unknown walker %q (grep, rsync, tar, restic, warm)", f)
		}
		out = append(out, w)
	}
	return out, nil
}

// grepCmd greps the small files under dir for the needle on their last
// line and checks every file had it.
func grepCmd(t *peerTree, dir string) string {
	return fmt.Sprintf("n=$(grep -r -l %s %s | wc -l) && test \"$n\" -eq %d || { echo \"grep found $n files, want %d\" >&2; exit 1; }",
		needle, dir, t.small, t.small)
}

// prepare empties scratch and runs w's preparation in it.
func (w walker) prepare(scratch string) error {
	script := fmt.Sprintf("rm -rf %s && mkdir -p %s", scratch, scratch)
	if w.prep != "" {
		script += " && " + strings.ReplaceAll(w.prep, "SCRATCH", scratch)
	}
	if out, err := exec.Command("bash", "-c", script).CombinedOutput(); err != nil {
		return fmt.Errorf("prepare %s: %w: %s", w.name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ownBytes is the small files' own size, what a walk must read at least.
func (t *peerTree) ownBytes() int64 {
	var n int64
	for _, f := range t.files[:t.small] {
		n += f.Size
	}
	return n
}
