package mountutil

import (
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// DefaultPath is the search path a helper run without $PATH gets: what
// mount(8) gives a helper it runs for a user (none: /bin/sh then searches
// its own default, and exports nothing), as the shells' default.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// FixHelperEnv makes the environment of a helper that mount(8) runs, from
// an /etc/fstab line with `user`, one a mount can work in, as a login
// shell's would be: mount(8) passes no $PATH (fusermount3, which go-fuse
// and rsfs find on $PATH, is then not found) and a $HOME that is not the
// user's (root's /root) or none (the log and the cache then have nowhere
// to go). An empty $PATH becomes DefaultPath; for a user who is not root,
// a $HOME that is unset or owned by someone else becomes the home of the
// real uid's passwd entry. Root keeps an unset $HOME: its state then goes
// to /var/cache (statedir.UserCacheDir), as under systemd. It returns
// what it changed, as "NAME=value" pairs, for the log.
func FixHelperEnv() []string {
	if changed := fixHelperEnv(os.Getenv, os.Setenv, os.Getuid(), passwdHome, ownerOf); len(changed) > 0 {
		_ = os.Setenv(helperEnvChanged, strings.Join(changed, "\n"))
		return changed
	}
	// A background mount's child inherits the completed environment: it
	// says what its parent changed.
	if v := os.Getenv(helperEnvChanged); v != "" {
		return strings.Split(v, "\n")
	}
	return nil
}

// helperEnvChanged is what FixHelperEnv changed, for the processes it
// starts.
const helperEnvChanged = "RSFS_HELPER_ENV_SET"

func fixHelperEnv(getenv func(string) string, setenv func(string, string) error, uid int,
	home func(uid int) (string, bool), owner func(path string) (int, bool)) []string {
	var changed []string
	if getenv("PATH") == "" && setenv("PATH", DefaultPath) == nil {
		changed = append(changed, "PATH="+DefaultPath)
	}
	if uid == 0 {
		return changed
	}
	h := getenv("HOME")
	if h != "" {
		if o, ok := owner(h); !ok || o == uid {
			return changed // theirs, or one that does not exist: its error names it
		}
	}
	if pw, ok := home(uid); ok && pw != h && setenv("HOME", pw) == nil {
		changed = append(changed, "HOME="+pw)
	}
	return changed
}

// passwdHome is the home directory of uid's passwd entry.
func passwdHome(uid int) (string, bool) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil || u.HomeDir == "" {
		return "", false
	}
	return u.HomeDir, true
}

// ownerOf is the uid that owns path.
func ownerOf(path string) (int, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}
