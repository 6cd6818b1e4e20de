// Package sdnotify speaks systemd's service notification protocol
// (sd_notify(3)): datagrams of NAME=VALUE lines to the unix socket named by
// $NOTIFY_SOCKET, so that a Type=notify unit knows when the service is
// ready, what it is doing, and that it is stopping.
package sdnotify

import (
	"fmt"
	"net"
	"os"
)

// Socket is the variable that names systemd's socket.
const Socket = "NOTIFY_SOCKET"

// Enabled reports whether $NOTIFY_SOCKET is set: whether Notify sends
// anything, so that callers can skip building what only systemd would read.
func Enabled() bool { return os.Getenv(Socket) != "" }

// Notify sends state (e.g. "READY=1", "STATUS=loading") to systemd. It
// does nothing, and returns nil, when $NOTIFY_SOCKET is not set: the
// process was not started by systemd as a notify service. A name starting
// with '@' is in the abstract namespace (Go's net package maps it).
func Notify(state string) error {
	name := os.Getenv(Socket)
	if name == "" {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", name, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", name, err)
	}
	return nil
}

// Ready says the service is ready.
func Ready() error { return Notify("READY=1") }

// Stopping says the service is stopping.
func Stopping() error { return Notify("STOPPING=1") }

// Status sets the one-line status systemctl status shows.
func Status(s string) error { return Notify("STATUS=" + s) }
