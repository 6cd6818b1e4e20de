package e2e

import (
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "not a number: %q", s)
	return n
}

func execCommand(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
