package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestString(t *testing.T) {
	b := Info{Version: "(devel)", Go: "go1.26.8", Platform: "linux/amd64"}
	b.FromDebug(&debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "rsfs", Version: "v0.0.0-20261126044634-54a5256e7a69+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "54a5256e7a69e94ba3d1d131ec5f5fc3196e4aa7"},
			{Key: "vcs.time", Value: "2026-11-26T04:46:34Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	})
	assert.Equal(t, "rsfs v0.0.0-20261126044634-54a5256e7a69+dirty\n"+
		"revision 54a5256e7a69e94ba3d1d131ec5f5fc3196e4aa7 (2026-11-26T04:46:34Z, modified)\n"+
		"go1.26.8 linux/amd64\n", b.String())
	assert.Equal(t, "v0.0.0-20261126044634-54a5256e7a69+dirty", b.UserAgent())

	tagged := Info{Version: "v1.2.3", Revision: "abc", Time: "2026-01-02T03:04:05Z", Go: "go1.26.8", Platform: "linux/arm64"}
	assert.Equal(t, "rsfs v1.2.3\nrevision abc (2026-01-02T03:04:05Z)\ngo1.26.8 linux/arm64\n", tagged.String())
	assert.Equal(t, "v1.2.3", tagged.UserAgent())

	// go run, go test, -buildvcs=false: no version, no revision.
	bare := Info{Version: "(devel)", Go: "go1.26.8", Platform: "linux/amd64"}
	assert.Equal(t, "rsfs (devel)\nrevision unknown (built without VCS information)\ngo1.26.8 linux/amd64\n", bare.String())
	assert.Equal(t, "devel", bare.UserAgent())
	dev := Info{Version: "(devel)", Revision: "54a5256e7a69e94ba3d1d131ec5f5fc3196e4aa7", Modified: true}
	assert.Equal(t, "devel-54a5256e7a69-modified", dev.UserAgent())

	// -ldflags -X main.version=... wins; the User-Agent stays a token.
	assert.Equal(t, "1.0_beta__debian_", Info{Version: "1.0 beta (debian)"}.UserAgent())
}
