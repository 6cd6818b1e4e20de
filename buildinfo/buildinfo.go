// Package buildinfo is what rsfs knows of its own build: the version, VCS
// revision and Go version the go command stamps into the binary, as
// `rsfs version` prints them and as the User-Agent carries them.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what rsfs knows of its own build.
type Info struct {
	Version  string // the module version: v1.2.3, a pseudo-version, or (devel)
	Revision string // the VCS revision, if stamped
	Time     string // the revision's commit time, RFC 3339, if stamped
	Modified bool   // the work tree had changes
	Go       string // the Go version that built it
	Platform string // GOOS/GOARCH
}

// Read reads the build information the go command stamps into every
// binary (the module version from the VCS tag or a pseudo-version, and
// vcs.revision, vcs.time, vcs.modified unless -buildvcs=false); version,
// if not "", overrides the module version (set at build time by
// -ldflags, for a packager whose build has no VCS stamp).
func Read(version string) Info {
	b := Info{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.FromDebug(bi)
	}
	if version != "" {
		b.Version = version
	}
	return b
}

// FromDebug fills b from bi.
func (b *Info) FromDebug(bi *debug.BuildInfo) {
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
func (b Info) String() string {
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
func (b Info) UserAgent() string {
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
