package mountutil

import (
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

// CatchSignals starts catching SIGINT and SIGTERM. Call it before the file
// system is mounted: a signal that arrives between the mount and the start
// of serving would otherwise kill the process with the default action and
// leave a dead mount behind. Signals caught before serving starts are
// answered as soon as it does.
func CatchSignals() <-chan os.Signal {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	return sigs
}

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
//
// sigs comes from CatchSignals, called before the file system is mounted.
func ServeUntilUnmounted(dir string, srv Server, sigs <-chan os.Signal, shutdown func(), grace time.Duration, log *slog.Logger) {
	serveUntil(dir, srv, sigs, shutdown, grace, log)
	go func() {
		for sig := range sigs {
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
