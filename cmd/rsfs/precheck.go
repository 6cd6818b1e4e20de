package main

import (
	"errors"
	"fmt"

	"rsfs/logfile"
	"rsfs/mountutil"
	"rsfs/statedir"
)

// precheck confirms, before anything is downloaded, that the mount can be
// made and kept (mountutil.Precheck), and that the log and state paths can
// be written; each failure names the flag that fixes it.
func precheck(mf *mountFlags, dir string) error {
	err := mountutil.Precheck(dir, mf.allowOther)
	var ao *mountutil.AllowOtherError
	if errors.As(err, &ao) {
		return fmt.Errorf("--allow-other: fusermount3 lets a user who is not root use allow_other only with a line user_allow_other in %s: an administrator can add it, or mount without --allow-other (only you will see the files), or as root", ao.Conf)
	}
	if err != nil {
		return err
	}
	if err := checkLogFile(mf, dir); err != nil {
		return err
	}
	if err := statedir.CheckBase(mf.cacheDir); err != nil {
		return fmt.Errorf("%w: pass a --cache-dir you can write, or --cache-dir none to remember nothing", err)
	}
	return nil
}

// checkLogFile creates the log file a mount will write, or its directory:
// --log-file, or a background mount's default one.
func checkLogFile(mf *mountFlags, dir string) error {
	path := mf.logFile
	hint := "pass a --log-file you can write"
	if path == "" {
		if mf.foreground || mountutil.InBackground() {
			return nil // stderr, or the parent checked it
		}
		var err error
		if path, err = logfile.DefaultPath(dir); err != nil {
			return fmt.Errorf("%w: set XDG_CACHE_HOME (or HOME) to a directory you can write, or pass --log-file", err)
		}
		hint = "set XDG_CACHE_HOME to a directory you can write, or pass --log-file"
	}
	if err := logfile.Check(path); err != nil {
		return fmt.Errorf("%w: %s", err, hint)
	}
	return nil
}
