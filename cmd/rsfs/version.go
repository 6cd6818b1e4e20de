package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version overrides the module version when set at build time (-ldflags
// "-X main.version=1.2.3", for a packager whose build has no VCS stamp);
// rsfs needs no -ldflags: it reads what the go command stamped.
var version string

// buildInfo is what rsfs knows of its own build.
type buildInfo struct {
	Version  string // the module version: v1.2.3, a pseudo-version, or (devel)
	Revision string // the VCS revision, if stamped
	Time     string // the revision's commit time, RFC 3339, if stamped
	Modified bool   // the work tree had changes
	Go       string // the Go version that built it
	Platform string // GOOS/GOARCH
}

// readBuildInfo reads the build information the go command stamps into
// every binary (the module version from the VCS tag or a pseudo-version,
// and vcs.revision, vcs.time, vcs.modified unless -buildvcs=false).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.fromDebug(bi)
	}
	if version != "" {
		b.Version = version
	}
	return b
}

func (b *buildInfo) fromDebug(bi *debug.BuildInfo) {
	if v := bi.Main.Version; v != "" {
		b.Version = v
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
}

// String is what `rsfs version` and `rsfs --version` print:
//
//	rsfs v0.0.0-20261126044634-54a5256e7a69+dirty
//	revision 54a5256e7a69e94ba3d1d131ec5f5fc3196e4aa7 (2026-11-26T04:46:34Z, modified)
//	go1.26.8 linux/amd64
func (b buildInfo) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "rsfs %s\n", b.Version)
	if b.Revision != "" {
		var notes []string
		if b.Time != "" {
			notes = append(notes, b.Time)
		}
		if b.Modified {
			notes = append(notes, "modified")
		}
		fmt.Fprintf(&s, "revision %s", b.Revision)
		if len(notes) > 0 {
			fmt.Fprintf(&s, " (%s)", strings.Join(notes, ", "))
		}
		s.WriteString("\n")
	} else {
		s.WriteString("revision unknown (built without VCS information)\n")
	}
	fmt.Fprintf(&s, "%s %s\n", b.Go, b.Platform)
	return s.String()
}

// UserAgent is the version the User-Agent carries (rsfs/VERSION): the
// module version, or for a development build devel and the short
// revision (devel-54a5256e7a69, plus -modified), as a token: no spaces
// or parentheses.
func (b buildInfo) UserAgent() string {
	v := b.Version
	if v == "(devel)" || v == "" {
		v = "devel"
		if b.Revision != "" {
			v += "-" + b.Revision[:min(12, len(b.Revision))]
			if b.Modified {
				v += "-modified"
			}
		}
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return '_'
		}
		return r
	}, v)
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of rsfs, its revision and the Go version that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), readBuildInfo().String())
			return err
		},
	}
}
