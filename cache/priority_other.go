//go:build !linux

package cache

func lowerPriority() {}
