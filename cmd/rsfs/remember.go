package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"rsfs/remember"
)

// stateDir is where rsfs remembers the Source at rawURL: its catalog
// snapshot and its disk cache of blocks. "" when remembering is off.
func (mf *mountFlags) stateDir(rawURL string) (string, error) {
	base := mf.cacheDir
	if base == "" {
		if d, err := userCacheDir(); err == nil {
			base = filepath.Join(d, "rsfs") // remember.Dir's default, or root's under systemd
		}
	}
	dir, err := remember.Dir(base, rawURL)
	if err != nil {
		return "", fmt.Errorf("--cache-dir: %w", err)
	}
	return dir, nil
}

// load discovers the Source and builds its catalog, from the snapshot in
// stateDir or from the Resource Lists (package remember decides).
func load(cmd *cobra.Command, mf *mountFlags, rawURL, stateDir string, prog *progress) (*remember.Loaded, error) {
	client, err := mf.client(rawURL)
	if err != nil {
		return nil, err
	}
	l, err := remember.Load(cmd.Context(), stateDir, rawURL, mf.sourceOptions(client), prog.update)
	prog.done()
	return l, err
}
