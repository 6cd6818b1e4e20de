// Package logfile is where rsfs's logs go: stderr, or a mount's log file
// (one per mount point by default, reopened on SIGHUP for logrotate), in
// text or JSON; and the pruning of old log files.
package logfile

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

// Output is where a process's logs go: stderr, or a log file. Writes to it
// are serialised, and it can be pointed elsewhere while loggers hold it.
type Output struct {
	mu   sync.Mutex
	f    *os.File
	path string // the log file; "" while logs go to stderr
	// redirect: the process's stdout and stderr follow the log file too
	// (a background mount: a panic, and what a child such as fusermount3
	// writes, land there)
	redirect bool
	// json: the logs are JSON, and so is the error the process ends with
	// (PrintError).
	json bool
	// failAttrs are the attributes of the error a command ends with, in
	// JSON: a mount's source and mount point.
	failAttrs []any
}

// New is an Output to stderr.
func New() *Output { return &Output{f: os.Stderr} }

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Write(p)
}

// Setup makes the default logger log at level onto o, as JSON (one object
// a line) or text (logfmt), repeated messages summarised (slogdedup).
func (o *Output) Setup(level slog.Level, json bool) {
	var h slog.Handler
	if json {
		h = slog.NewJSONHandler(o, JSONOptions(&slog.HandlerOptions{Level: level}))
	} else {
		h = slog.NewTextHandler(o, &slog.HandlerOptions{Level: level})
	}
	o.mu.Lock()
	o.json = json
	o.mu.Unlock()
	slog.SetDefault(slog.New(slogdedup.New(h)))
}

// JSON reports whether the logs are JSON.
func (o *Output) JSON() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.json
}

// ToFile sends the logs to the file at path (created or appended); with
// redirect, the process's stdout and stderr too, and stdin is detached.
func (o *Output) ToFile(path string, redirect bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.path, o.redirect = path, redirect
	return o.openLocked()
}

func (o *Output) openLocked() error {
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

// Reopen opens the log file again by its name, after logrotate moved it
// (SIGHUP). Logs keep going to the old file if that fails.
func (o *Output) Reopen() {
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

// Detach sends a background mount's logs to their file (path, or the
// mount point dir's default one) and returns copies of the terminal it
// was started from, its stderr and stdout: the stderr for progress and
// warnings while it loads, the stdout for the line that says it mounted.
func (o *Output) Detach(path, dir string) (term, out *os.File, err error) {
	if path == "" {
		if path, err = DefaultPath(dir); err != nil {
			return nil, nil, err
		}
	}
	errFD, err := syscall.Dup(2)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	term = os.NewFile(uintptr(errFD), "terminal")
	outFD, err := syscall.Dup(1)
	if err != nil {
		term.Close()
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	out = os.NewFile(uintptr(outFD), "stdout")
	if err := o.ToFile(path, true); err != nil {
		term.Close()
		out.Close()
		return nil, nil, err
	}
	return term, out, nil
}

// Toward reports whether the logs go to a file rather than stderr, and
// whether stderr goes there too.
func (o *Output) Toward() (file, redirected bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.path != "", o.redirect
}

// File is the log file, or "" while logs go to stderr.
func (o *Output) File() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.path
}

// FailWith sets the attributes of the error the command ends with, in
// JSON (PrintError): a mount's source and mount point.
func (o *Output) FailWith(attrs ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failAttrs = attrs
}

// PrintError writes msg, the one line of the error a command ends with, to
// stderr, or with JSON logs one JSON object (level ERROR, msg the line).
// A background mount, whose stderr is its log, prints nothing: its log has
// said how it ended, and the waiting parent prints the error.
func (o *Output) PrintError(msg string) {
	o.mu.Lock()
	redirected, json, attrs := o.redirect, o.json, o.failAttrs
	o.mu.Unlock()
	switch {
	case redirected:
	case json:
		slog.New(slog.NewJSONHandler(os.Stderr, JSONOptions(nil))).Error(msg, attrs...)
	default:
		fmt.Fprintln(os.Stderr, msg)
	}
}

// JSONOptions are opts (nil: the defaults) for a JSON log: a duration is
// written in seconds, as a float ("wait":0.286), which log shippers read
// as a number, rather than in integer nanoseconds.
func JSONOptions(opts *slog.HandlerOptions) *slog.HandlerOptions {
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

// DefaultPath is a mount's log file when none is given: one per mount
// point, named after it as systemd names units
// ($XDG_CACHE_HOME/rsfs/logs/mnt-data.log for /mnt/data).
func DefaultPath(dir string) (string, error) {
	logs, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(logs, EscapePath(dir)+".log"), nil
}

// Dir is where mounts log by default: $XDG_CACHE_HOME/rsfs/logs.
func Dir() (string, error) {
	base, err := statedir.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("log file: %w", err)
	}
	return filepath.Join(base, "rsfs", "logs"), nil
}

// EscapePath is systemd-escape --path: the path without its leading and
// trailing slashes, each "/" a "-", and every byte but ASCII letters,
// digits, ":", "_" and a "." that does not lead written \xNN; the root is
// "-".
func EscapePath(p string) string {
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

// Check creates the log file at path, or its directory, as the mount that
// will write it does, so that a path it cannot write fails before anything
// is downloaded.
func Check(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("log file %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log file %s: %w", path, err)
	}
	return f.Close()
}
