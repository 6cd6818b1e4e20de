package mountutil

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// UnmountOnSignal unmounts dir on SIGINT or SIGTERM, which ends the FUSE
// server and so the process. First it calls shutdown, which must fail the
// reads in flight, so that the unmount does not wait on the network; a busy
// mount is detached lazily. If the server has still not ended after grace,
// the process exits: closing /dev/fuse aborts what is left. It returns a
// function that stops listening.
func UnmountOnSignal(dir string, shutdown func(), grace time.Duration, log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			log.Info("signal received; unmounting", "signal", sig.String(), "dir", dir)
			shutdown()
			if err := Unmount(dir); err != nil {
				log.Error("unmount failed", "err", err)
			}
			time.AfterFunc(grace, func() {
				log.Warn("file system still busy after unmount; exiting", "grace", grace)
				os.Exit(0)
			})
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
