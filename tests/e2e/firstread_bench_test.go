package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"rsfs/tests/sourcetest"
)

// BenchmarkFirstRead measures `cat` of a large file never read before
// (issue 14): wall time, the rsfs process's CPU time (/proc/PID/stat), its
// RSS after the read and at peak (VmRSS, VmHWM), and the content requests
// the Source saw; and, in the same run, `curl -s URL | openssl dgst -sha256`
// (wall and CPU, getrusage of the children). Each iteration mounts afresh
// (memory cache only, default --cache-size), so every read is cold.
//
// RSFS_BENCH_MIB sets the file size (default 512). RSFS_BASELINE_BIN names
// another rsfs binary (e.g. built from main) measured as "baseline" in the
// same run. RSFS_CPU_PROFILE, when set, is a directory where each mount
// writes a CPU profile (--cpu-profile).
//
//	go test -run '^$' -bench FirstRead -benchtime 1x -count 5 ./tests/e2e/
func BenchmarkFirstRead(b *testing.B) {
	size := 512
	if s := os.Getenv("RSFS_BENCH_MIB"); s != "" {
		size, _ = strconv.Atoi(s)
	}
	src, err := sourcetest.Start(sourcetest.Config{Resources: 1, MinSize: int64(size) << 20, MaxSize: int64(size) << 20, Hashes: []string{"sha-256"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(src.Close)
	r := src.Resources()[0]
	bins := [][2]string{{"rsfs", rsfsBin}}
	if base := os.Getenv("RSFS_BASELINE_BIN"); base != "" {
		bins = append([][2]string{{"baseline", base}}, bins...)
	}
	for _, bin := range bins {
		b.Run(bin[0], func(b *testing.B) { benchCat(b, src, r, bin[1]) })
	}
	b.Run("curl-openssl", func(b *testing.B) { benchCurl(b, src, r) })
}

func benchCat(b *testing.B, src *sourcetest.Source, r sourcetest.Resource, bin string) {
	for i := range b.N {
		b.StopTimer()
		dir := b.TempDir()
		mnt := filepath.Join(dir, "mnt")
		if err := os.Mkdir(mnt, 0o755); err != nil {
			b.Fatal(err)
		}
		args := []string{"mount", src.URL(), mnt, "--cache-dir", "none", "--log-file", filepath.Join(dir, "log"), "--poll-interval", "0"}
		if p := os.Getenv("RSFS_CPU_PROFILE"); p != "" {
			args = append(args, "--cpu-profile", filepath.Join(p, fmt.Sprintf("%s-%d.pprof", filepath.Base(bin), i)))
		}
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			b.Fatalf("mount: %v %s", err, out)
		}
		unmount := func() {
			if err := exec.Command("umount", mnt).Run(); err != nil {
				_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
			}
		}
		b.Cleanup(unmount)
		pid := pidOf(b, "rsfs mount "+src.URL()+" "+mnt+" ")
		path := findOne(b, mnt)
		src.ResetCounters()
		cpu0 := procCPU(b, pid)
		h := sha256.New()
		cmd := exec.Command("cat", path)
		cmd.Stdout = h
		b.StartTimer()
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatalf("cat: %v", err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != r.Hashes[0].Value {
			b.Fatalf("cat read %s, published %s", got, r.Hashes[0].Value)
		}
		b.ReportMetric(wall.Seconds(), "s/read")
		b.ReportMetric((procCPU(b, pid) - cpu0).Seconds(), "rsfs-cpu-s/read")
		b.ReportMetric(float64(procStatus(b, pid, "VmRSS:"))/1e6, "RSS-MB")
		b.ReportMetric(float64(procStatus(b, pid, "VmHWM:"))/1e6, "HWM-MB")
		b.ReportMetric(float64(src.Counters().ContentGets()), "requests")
		unmount()
		waitExit(b, pid)
	}
}

func benchCurl(b *testing.B, src *sourcetest.Source, r sourcetest.Resource) {
	for range b.N {
		b.StopTimer()
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		cmd := exec.Command("sh", "-c", `curl -s "$1" | openssl dgst -sha256`, "sh", r.URI)
		b.StartTimer()
		start := time.Now()
		out, err := cmd.Output()
		wall := time.Since(start)
		b.StopTimer()
		if err != nil || !strings.Contains(string(out), r.Hashes[0].Value) {
			b.Fatalf("curl | openssl: %v %s", err, out)
		}
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(wall.Seconds(), "s/read")
		b.ReportMetric(cpu.Seconds(), "children-cpu-s/read")
	}
}

func pidOf(b *testing.B, pattern string) int {
	out, err := exec.Command("pgrep", "-f", pattern).Output()
	fields := strings.Fields(string(out))
	if err != nil || len(fields) != 1 {
		b.Fatalf("pgrep %q: %v %q", pattern, err, out)
	}
	pid, _ := strconv.Atoi(fields[0])
	return pid
}

func findOne(b *testing.B, dir string) string {
	var found string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			found = p
		}
		return nil
	})
	if found == "" {
		b.Fatalf("no file under %s", dir)
	}
	return found
}

// procCPU is the user+system time of a process, from /proc/PID/stat (in
// clock ticks of 10 ms).
func procCPU(b testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procStatus is a kB field of /proc/PID/status, in bytes.
func procStatus(b *testing.B, pid int, field string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func waitExit(b *testing.B, pid int) {
	deadline := time.Now().Add(20 * time.Second)
	for !exited(pid) {
		if time.Now().After(deadline) {
			b.Fatalf("rsfs %d did not exit", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
