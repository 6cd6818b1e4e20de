package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs rsfs with args in process, as main does, and returns what it
// wrote and its exit status. It must not reach a command that does work.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = append([]string{"rsfs"}, args...)
	root := rootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	err := rewriteHelperArgs(root)
	if err == nil {
		err = root.Execute()
	}
	code, msg := exitCode(err)
	if msg != nil {
		errb.WriteString("rsfs: " + oneLine(msg) + "\n")
	}
	return out.String(), errb.String(), code
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inspcet", "http://h/"}, `rsfs: unknown command "inspcet" for "rsfs" (did you mean inspect?); see 'rsfs --help'` + "\n"},
		{[]string{"stauts", "/mnt"}, `rsfs: unknown command "stauts" for "rsfs" (did you mean status?); see 'rsfs --help'` + "\n"},
		{[]string{"frobnicate"}, `rsfs: unknown command "frobnicate" for "rsfs"; see 'rsfs --help'` + "\n"},
		{[]string{"mount", "http://h/"}, "rsfs: accepts 2 arg(s), received 1; usage: rsfs mount URL DIR [flags]\n"},
		{[]string{"status"}, "rsfs: accepts 1 arg(s), received 0; usage: rsfs status DIR [flags]\n"},
		{[]string{"version", "now"}, `rsfs: unknown command "now" for "rsfs version"; usage: rsfs version [flags]` + "\n"},
		{[]string{"inspect", "--no-such-flag", "http://h/"}, "rsfs: unknown flag: --no-such-flag\n"},
		{[]string{"http://h/", "/mnt", "-o", "bogus"}, ""},
	} {
		stdout, stderr, code := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%q", tc.args)
		assert.Empty(t, stdout, "%q", tc.args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%q: one line, once: %q", tc.args, stderr)
		if tc.want != "" {
			assert.Equal(t, tc.want, stderr, "%q", tc.args)
		}
	}
}

func TestExitCode(t *testing.T) {
	code, msg := exitCode(nil)
	assert.Equal(t, 0, code)
	assert.NoError(t, msg)
	failed := errors.New("discover: connection refused")
	code, msg = exitCode(failed)
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, failed, msg)
	code, msg = exitCode(exitWith(auditDrift, nil))
	assert.Equal(t, auditDrift, code)
	assert.NoError(t, msg, "the report said it")
	code, msg = exitCode(exitWith(auditError, failed))
	assert.Equal(t, auditError, code)
	assert.Equal(t, failed, msg)
	code, _ = exitCode(usagef("--poll-interval 1ns: want 0 or at least 100ms"))
	assert.Equal(t, exitUsage, code)
}

// A first word that is no command and no URL is cobra's: a typo is not
// mounted; a URL still starts the mount(8) form.
func TestHelperFormNeedsAURL(t *testing.T) {
	for _, args := range [][]string{
		{"inspcet", "http://h/"},
		{"__complete", "mount", ""},
		{"__completeNoDesc", "st"},
		{"version"},
	} {
		got, err := rewritten(t, args...)
		require.NoError(t, err)
		assert.Equal(t, args, got)
	}
	for _, url := range []string{"http://h/", "data.example.org", "/etc/url"} {
		got, err := rewritten(t, url, "/mnt")
		require.NoError(t, err)
		assert.Equal(t, []string{"mount", url, "/mnt"}, got)
	}
}

func TestVersionCommand(t *testing.T) {
	flagOut, _, code := runCLI(t, "--version")
	assert.Equal(t, 0, code)
	cmdOut, _, code := runCLI(t, "version")
	assert.Equal(t, 0, code)
	assert.Equal(t, flagOut, cmdOut)
	assert.Equal(t, readBuildInfo().String(), cmdOut)
}
