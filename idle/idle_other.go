//go:build !linux

package idle

func lockThread() {}
