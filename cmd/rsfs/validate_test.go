package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// execute runs rsfs with args as main does, up to the exit status.
func execute(t *testing.T, args ...string) (int, error) {
	t.Helper()
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = append([]string{"rsfs"}, args...)
	root := rootCmd()
	err := rewriteHelperArgs(root)
	if err == nil {
		err = root.Execute()
	}
	switch {
	case err == nil:
		return 0, nil
	case isUsage(err):
		return exitUsage, err
	}
	return 1, err
}

// Every flag is checked before anything is mounted: a value out of range
// is a usage error (exit status 2) naming the flag and what it accepts.
func TestMountFlagsAreRangeChecked(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir") // a flag that passes reaches the mount point
	for _, c := range []struct {
		flags []string
		code  int
		want  string
	}{
		{[]string{"--poll-interval", "-1s"}, 2, "--poll-interval -1s: want 0 (do not follow) or at least 100ms"},
		{[]string{"--poll-interval", "1ns"}, 2, "--poll-interval 1ns"},
		{[]string{"--poll-interval", "0"}, 1, "mountpoint"},
		{[]string{"--block-size", "3"}, 2, "--block-size 3: want a power of two from 4KiB to 16MiB"},
		{[]string{"--block-size", "3000"}, 2, "--block-size 3000"},
		{[]string{"--block-size", "32MiB"}, 2, "--block-size 32MiB"},
		{[]string{"--block-size", "12KiB"}, 2, "--block-size 12KiB: want a power of two from 4KiB to 16MiB"}, // in range, not a power of two
		{[]string{"--block-size", "64KiB"}, 1, "mountpoint"},
		{[]string{"--cache-size", "0"}, 2, "--cache-size 0: want at least 4MiB"},
		{[]string{"--cache-size", "1MiB", "--block-size", "256KiB"}, 1, "mountpoint"},
		{[]string{"--cache-size", "99999999999T"}, 2, `--cache-size: "99999999999T" is too large`},
		{[]string{"--cache-size", "12Q"}, 2, `--cache-size: "12Q" is not a size`},
		{[]string{"--cache-max-size", "0"}, 1, "mountpoint"}, // 0: no disk cache
		{[]string{"--cache-max-size", "1K"}, 2, "--cache-max-size 1K: want 0 (no disk cache) or at least one block (1MiB)"},
		{[]string{"--memory-limit", "99999999999T"}, 2, "--memory-limit"},
		{[]string{"--verify-whole-below", "-1"}, 2, "--verify-whole-below"},
		{[]string{"--verify-whole-below", "1GiB"}, 2, "--verify-whole-below 1GiB: want at most a quarter of --cache-size (64MiB), or 0 to stream every file"},
		{[]string{"--verify-whole-below", "64MiB"}, 1, "mountpoint"},
		{[]string{"--verify-whole-below", "0"}, 1, "mountpoint"},
		{[]string{"--cache-size", "8MiB"}, 1, "mountpoint"}, // the default 16MiB is capped, as it was not given
		{[]string{"--poll-interval", "5"}, 2, `invalid argument "5" for "--poll-interval" flag: time: missing unit in duration "5"; use a unit: 5s, 1m, 1h`},
		{[]string{"--timeout", "30"}, 2, "; use a unit: 5s, 1m, 1h"},
		{[]string{"--timeout", "-1s"}, 2, "--timeout -1s: want a duration above 0"},
		{[]string{"--timeout", "0"}, 2, "--timeout 0s"},
		{[]string{"--timeout", "abc"}, 2, `invalid argument "abc" for "--timeout"`},
		{[]string{"--retries", "-1"}, 2, "--retries -1: want 0 (no retries) to 100"},
		{[]string{"--retries", "0"}, 1, "mountpoint"},
		{[]string{"--parallel", "0"}, 2, "--parallel 0: want 1 to 256"},
		{[]string{"--parallel", "-3"}, 2, "--parallel -3"},
		{[]string{"--max-doc-size", "0"}, 2, "--max-doc-size 0"},
		{[]string{"--min-rate", "fast"}, 2, "--min-rate"},
		{[]string{"--read-ahead", "-2"}, 2, "--read-ahead -2"},
		{[]string{"--uid", "-1"}, 2, "--uid -1: want 0 to 4294967294"},
		{[]string{"--gid", "4294967295"}, 2, "--gid 4294967295"},
		{[]string{"--ready-timeout", "0"}, 2, "--ready-timeout 0s"},
		{[]string{"--allow-host", "notaurl"}, 2, `--allow-host "notaurl": want an origin`},
		{[]string{"--allow-host", "ftp://mirror.example.org"}, 2, "--allow-host"},
		{[]string{"--allow-host", "https://mirror.example.org"}, 1, "mountpoint"},
		{[]string{"--header", "no colon"}, 2, `--header "no colon"`},
		{[]string{"--notify-addr", "bad"}, 2, `--notify-addr "bad": want HOST:PORT`},
		{[]string{"--notify-addr", "127.0.0.1:99999"}, 2, "--notify-addr"},
		{[]string{"--metrics-addr", "nope"}, 2, `--metrics-addr "nope"`},
		{[]string{"--notify-url", "http://h/"}, 2, "--notify-url needs --notify-addr"},
		{[]string{"--notify-addr", ":0", "--notify-url", "h:1"}, 2, "--notify-url"},
		{[]string{"--log-level", "loud"}, 2, `--log-level "loud"`},
		{[]string{"--log-format", "xml"}, 2, `--log-format "xml"`},
		{[]string{"--no-such-flag"}, 2, "unknown flag"},
	} {
		args := append([]string{"mount", "http://127.0.0.1:1/", missing}, c.flags...)
		code, err := execute(t, args...)
		require.Error(t, err, "%v", c.flags)
		assert.Equal(t, c.code, code, "%v: %v", c.flags, err)
		assert.Contains(t, err.Error(), c.want, "%v", c.flags)
	}
}

func TestOtherCommandsRangeCheck(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "http://127.0.0.1:1/", "--retries", "-1"}, "--retries -1"},
		{[]string{"inspect", "http://127.0.0.1:1/", "--allow-host", "x"}, "--allow-host"},
		{[]string{"audit", "http://127.0.0.1:1/", "--parallel", "0"}, "--parallel 0"},
		{[]string{"audit", "http://127.0.0.1:1/", "--bytes", "-1"}, "--bytes -1"},
		{[]string{"hold", t.TempDir(), "--for", "-1h"}, "--for -1h0m0s: want a duration above 0"},
		{[]string{"hold", t.TempDir(), "--for", "0"}, "--for 0s"},
		{[]string{"http://127.0.0.1:1/", t.TempDir(), "-o", "bogus"}, "-o bogus: unknown mount option"},
		{[]string{"inspect", "127.0.0.1:8080"}, `"127.0.0.1:8080" is not an http(s) URL (did you mean http://127.0.0.1:8080/?)`},
		{[]string{"inspect", "localhost:8080/data/"}, `"localhost:8080/data/" is not an http(s) URL (did you mean http://localhost:8080/data/?)`},
		{[]string{"audit", "localhost:8080"}, `"localhost:8080" is not an http(s) URL (did you mean http://localhost:8080/?), nor a directory`},
		{[]string{"inspect", "htp://127.0.0.1:8080/"}, `"htp://127.0.0.1:8080/" is not an http(s) URL (e.g. https://data.example.org/)`},
		{[]string{"mount", "127.0.0.1:8080", t.TempDir()}, `"127.0.0.1:8080" is not an http(s) URL (did you mean http://127.0.0.1:8080/?)`},
		{[]string{"mount", "/mnt/data", "http://127.0.0.1:8080/"}, `"http://127.0.0.1:8080/" is a URL and "/mnt/data" is not: the URL comes first (did you mean 'rsfs mount http://127.0.0.1:8080/ /mnt/data'?)`},
		{[]string{"/mnt/data", "http://127.0.0.1:8080/", "-o", "ro"}, "the URL comes first"},
	} {
		code, err := execute(t, c.args...)
		require.Error(t, err, "%v", c.args)
		assert.Equal(t, exitUsage, code, "%v: %v", c.args, err)
		assert.Contains(t, err.Error(), c.want, "%v", c.args)
	}
}
