package mountutil

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Server is a FUSE server being served (a *fuse.Server).
type Server interface {
	// Wait returns when the file system is unmounted.
	Wait()
	// Unmount unmounts it: umount(2) as root, else fusermount3 -u.
	Unmount() error
}

// Signals holds SIGINT, SIGTERM and SIGHUP for the life of a mount, from before the
// mount is made: a signal that killed the process between mounting and
// serving would leave a dead mount ("transport endpoint is not connected").
type Signals struct {
	ctx context.Context
	in  chan os.Signal // registered with signal.Notify
	out chan os.Signal // every signal caught, for ServeUntilUnmounted
}

// CatchSignals starts holding SIGINT, SIGTERM and SIGHUP until the
// process ends. The first one cancels Context, so that loading stops; once
// the file system is mounted, ServeUntilUnmounted acts on it, even if it
// came before. If hangup is not nil, SIGHUP calls it instead (rsfs mount
// reopens its log file, for logrotate, and never unmounts); else SIGHUP is
// one more signal to stop.
func CatchSignals(parent context.Context, hangup func()) *Signals {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancelCause(parent)
	s := &Signals{ctx: ctx, in: ch, out: make(chan os.Signal, 8)}
	go func() {
		for sig := range ch {
			if sig == syscall.SIGHUP && hangup != nil {
				hangup()
				continue
			}
			cancel(fmt.Errorf("%s signal received", sig))
			select {
			case s.out <- sig:
			default: // a burst: the first is what counts
			}
		}
	}()
	return s
}

// Context is cancelled by the first signal to stop.
func (s *Signals) Context() context.Context { return s.ctx }

// Stop gives the signals their default action back.
func (s *Signals) Stop() { signal.Stop(s.in) }

// ServeUntilUnmounted returns when the file system at dir is unmounted, by
// a user (umount, fusermount3 -u) or on SIGINT or SIGTERM. On a signal it
// calls shutdown, which must fail the reads in flight so that the unmount
// does not wait on the network, then unmounts; a busy mount is detached
// lazily. If the server has still not ended grace after that (a process
// keeps a file open on the detached mount), it returns anyway.
//
// It never exits the process: the caller finishes its own bounded work
// (saving state, unsubscribing) and then exits, which closes /dev/fuse and
// so aborts whatever the detached mount still serves. Signals that arrive
// after the first are logged and ignored, so that they do not cut that
// work short either.
func ServeUntilUnmounted(dir string, srv Server, sigs *Signals, shutdown func(), grace time.Duration, log *slog.Logger) {
	serveUntil(dir, srv, sigs.out, shutdown, grace, log)
	go func() {
		for sig := range sigs.out {
			log.Info("signal ignored: finishing the shutdown", "signal", sig.String())
		}
	}()
}

func serveUntil(dir string, srv Server, sigs <-chan os.Signal, shutdown func(), grace time.Duration, log *slog.Logger) {
	ended := make(chan struct{})
	go func() { srv.Wait(); close(ended) }()
	select {
	case <-ended:
		return
	case sig := <-sigs:
		log.Info("signal received; unmounting", "signal", sig.String(), "dir", dir)
	}
	shutdown()
	unmounted := make(chan error, 1)
	go func() { unmounted <- unmountServer(dir, srv) }()
	var giveUp <-chan time.Time
	for {
		select {
		case <-ended:
			return
		case err := <-unmounted:
			if err != nil {
				log.Error("unmount failed", "err", err)
			}
			giveUp = time.After(grace)
		case <-giveUp:
			log.Warn("file system still busy after unmount; not waiting for it", "grace", grace)
			return
		case sig := <-sigs:
			log.Info("signal ignored: already unmounting", "signal", sig.String())
		}
	}
}

// unmountServer unmounts with go-fuse's own Unmount, which falls back to
// fusermount3 -u when not root; a busy mount is then detached lazily.
func unmountServer(dir string, srv Server) error {
	err := srv.Unmount()
	if err == nil {
		return nil
	}
	if derr := Detach(dir); derr != nil {
		return fmt.Errorf("unmount %s: %v; then %w", dir, err, derr)
	}
	return nil
}
