package termui

import (
	"fmt"

	"rsfs/report"
)

// MountedLine is what a mount that worked says on the terminal: "mounted
// 5,013 resources from URL at DIR (log: PATH)".
func MountedLine(resources int, rawURL, dir, logFile string) string {
	line := fmt.Sprintf("mounted %s resources from %s at %s", report.Thousands(int64(resources)), rawURL, dir)
	if logFile != "" {
		line += " (log: " + logFile + ")"
	}
	return line
}
