package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rewritten(t *testing.T, args ...string) ([]string, error) {
	t.Helper()
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = append([]string{"rsfs"}, args...)
	root := rootCmd()
	if err := rewriteHelperArgs(root); err != nil {
		return nil, err
	}
	return os.Args[1:], nil
}

func TestHelperFormBecomesMount(t *testing.T) {
	got, err := rewritten(t, "http://h/", "/mnt", "-o", "ro,nodev,nosuid,dev,suid,rw,noexec,poll_interval=30s,cache_size=1G,allow_other,_netdev,x-systemd.automount,comment=x,log_level=debug")
	require.NoError(t, err)
	assert.Equal(t, []string{"mount", "http://h/", "/mnt", "--poll-interval=30s", "--cache-size=1G", "--allow-other", "--log-level=debug"}, got)
}

func TestHelperFormKeepsOtherArgs(t *testing.T) {
	got, err := rewritten(t, "mount", "http://h/", "/mnt", "-oallow_non_empty,uid=7", "--foreground", "-o", "gid=8")
	require.NoError(t, err)
	assert.Equal(t, []string{"mount", "http://h/", "/mnt", "--allow-non-empty", "--uid=7", "--foreground", "--gid=8"}, got)
	got, err = rewritten(t, "hold", "/mnt", "--for", "1h")
	require.NoError(t, err)
	assert.Equal(t, []string{"hold", "/mnt", "--for", "1h"}, got)
	got, err = rewritten(t, "--version")
	require.NoError(t, err)
	assert.Equal(t, []string{"--version"}, got)
}

func TestHelperFormRefusesUnknownOptions(t *testing.T) {
	for _, o := range []string{"bogus", "poll_interval", "cpu_profile=x", "-o"} {
		args := []string{"http://h/", "/mnt", "-o", o}
		if o == "-o" {
			args = args[:3]
		}
		_, err := rewritten(t, args...)
		assert.Error(t, err, o)
	}
}

// Old fstab lines carry no_open, a deprecated flag that does nothing: they
// still mount.
func TestHelperFormAcceptsDeprecatedOptions(t *testing.T) {
	got, err := rewritten(t, "http://h/", "/mnt", "-o", "ro,no_open")
	require.NoError(t, err)
	assert.Equal(t, []string{"mount", "http://h/", "/mnt", "--no-open"}, got)
	_, err = rewritten(t, "http://h/", "/mnt", "-o", "cpu_profile=/tmp/x")
	assert.ErrorContains(t, err, "unknown mount option", "a hidden flag that is not deprecated is no option")
}
