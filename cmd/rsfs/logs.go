package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"rsfs/slogdedup"
	"rsfs/statedir"
)

// logOut is where the logs go: stderr, or a mount's log file. Writes to it
// are serialised, and it can be pointed elsewhere while loggers hold it.
var logOut = &logOutput{f: os.Stderr}

// logJSON is --log-format json: then whatever rsfs itself writes to stderr
// is a JSON object too (printError).
var logJSON bool

type logOutput struct {
	mu   sync.Mutex
	f    *os.File
	path string // the log file; "" while logs go to stderr
	// redirect: the process's stdout and stderr follow the log file too
	// (a background mount: a panic, and what a child such as fusermount3
	// writes, land there)
	redirect bool
}

func (o *logOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Write(p)
}

// toFile sends the logs to the file at path (created or appended); with
// redirect, the process's stdout and stderr too, and stdin is detached.
func (o *logOutput) toFile(path string, redirect bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.path, o.redirect = path, redirect
	return o.openLocked()
}

func (o *logOutput) openLocked() error {
	if err := os.MkdirAll(filepath.Dir(o.path), 0o700); err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	f, err := os.OpenFile(o.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log %s: %w", o.path, err)
	}
	if o.redirect {
		for _, fd := range []int{1, 2} {
			if err := syscall.Dup2(int(f.Fd()), fd); err != nil {
				f.Close()
				return fmt.Errorf("redirect output to %s: %w", o.path, err)
			}
		}
		if null, err := os.Open(os.DevNull); err == nil {
			_ = syscall.Dup2(int(null.Fd()), 0)
			null.Close()
		}
	}
	if o.f != os.Stderr {
		o.f.Close()
	}
	o.f = f
	return nil
}

// reopen opens the log file again by its name, after logrotate moved it
// (SIGHUP). Logs keep going to the old file if that fails.
func (o *logOutput) reopen() {
	o.mu.Lock()
	if o.path == "" {
		o.mu.Unlock()
		return
	}
	err := o.openLocked()
	o.mu.Unlock()
	if err != nil {
		slog.Error("reopening the log file (SIGHUP)", "err", err)
		return
	}
	slog.Info("log file reopened (SIGHUP)", "log_file", o.path)
}

// defaultLogFile is a mount's log file when --log-file is not given: one
// per mount point, named after it as systemd names units
// ($XDG_CACHE_HOME/rsfs/logs/mnt-data.log for /mnt/data).
func defaultLogFile(dir string) (string, error) {
	base, err := statedir.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("log file: %w", err)
	}
	return filepath.Join(base, "rsfs", "logs", escapePath(dir)+".log"), nil
}

// escapePath is systemd-escape --path: the path without its leading and
// trailing slashes, each "/" a "-", and every byte but ASCII letters,
// digits, ":", "_" and a "." that does not lead written \xNN; the root is
// "-".
func escapePath(p string) string {
	p = strings.Trim(filepath.Clean(p), "/")
	if p == "" {
		return "-"
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/':
			b.WriteByte('-')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ':', c == '_', c == '.' && i > 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}

// setupLogging sets the root logger: level and format, onto logOut.
func setupLogging(level, format string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := jsonOptions(&slog.HandlerOptions{Level: l})
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: l})
	case "json":
		h = slog.NewJSONHandler(logOut, opts)
		logJSON = true
	default:
		return usagef("--log-format %q: want text or json", format)
	}
	slog.SetDefault(slog.New(slogdedup.New(h)))
	return nil
}

// printError writes the error a command ends with to stderr: "rsfs: " and
// one line, or with --log-format json one JSON object (level ERROR, msg
// the same line).
func printError(err error) {
	msg := "rsfs: " + oneLine(err)
	if _, redirected := logOut.toward(); redirected {
		// A background mount's stderr is its log, which has said how
		// it ended (mountFailed); the waiting parent prints the error.
		return
	}
	if logJSON {
		slog.New(slog.NewJSONHandler(os.Stderr, jsonOptions(nil))).Error(msg, failAttrs...)
		return
	}
	fmt.Fprintln(os.Stderr, msg)
}

// failAttrs are the attributes of the error a command ends with, in JSON:
// a mount's source and mount point.
var failAttrs []any

// toward reports whether the logs go to a file rather than stderr, and
// whether stderr goes there too.
func (o *logOutput) toward() (file, redirected bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.path != "", o.redirect
}

// jsonOptions are opts (nil: the defaults) for a JSON log: a duration is
// written in seconds, as a float ("wait":0.286), which log shippers read
// as a number, rather than in integer nanoseconds.
func jsonOptions(opts *slog.HandlerOptions) *slog.HandlerOptions {
	o := slog.HandlerOptions{}
	if opts != nil {
		o = *opts
	}
	o.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			return slog.Float64(a.Key, a.Value.Duration().Seconds())
		}
		return a
	}
	return &o
}

// file is the log file, or "" while logs go to stderr.
func (o *logOutput) file() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.path
}
