package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// complete asks rsfs for completions as the shells' scripts do (`rsfs
// __complete ARGS...`, the word being completed last), and returns the
// suggestions (without descriptions) and the directive line (":4").
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, code, "%q: %s", args, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.NotEmpty(t, lines)
	directive := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(directive, ":"), "%q: no directive line in %q", args, stdout)
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got, directive
}

func TestCompletion(t *testing.T) {
	got, d := complete(t, "")
	assert.Subset(t, got, []string{"audit", "completion", "hold", "inspect", "mount", "release", "status", "version"})
	assert.Equal(t, ":4", d)

	got, d = complete(t, "st")
	assert.Equal(t, []string{"status"}, got)
	assert.Equal(t, ":4", d)

	// mount URL DIR: no file names for the URL; directories for DIR.
	got, d = complete(t, "mount", "")
	assert.Empty(t, got)
	assert.Equal(t, ":4", d) // ShellCompDirectiveNoFileComp
	got, d = complete(t, "mount", "https://data.example.org/", "")
	assert.Empty(t, got)
	assert.Equal(t, ":16", d) // ShellCompDirectiveFilterDirs
	_, d = complete(t, "mount", "https://data.example.org/", "/mnt", "")
	assert.Equal(t, ":4", d)

	_, d = complete(t, "inspect", "")
	assert.Equal(t, ":4", d)

	// status DIR: the rsfs mounts now, else directories.
	got, d = complete(t, "status", "/nonexistent/")
	assert.Empty(t, got)
	assert.Equal(t, ":16", d)

	got, d = complete(t, "--log-level", "")
	assert.Equal(t, []string{"debug", "info", "warn", "error"}, got)
	assert.Equal(t, ":4", d)
	got, _ = complete(t, "mount", "--log-format", "j")
	assert.Equal(t, []string{"json"}, got)

	got, _ = complete(t, "completion", "")
	assert.Subset(t, got, []string{"bash", "fish", "zsh"})
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		stdout, stderr, code := runCLI(t, "completion", shell)
		assert.Equal(t, 0, code, "%s: %s", shell, stderr)
		assert.Contains(t, stdout, "__complete", shell)
	}
}
