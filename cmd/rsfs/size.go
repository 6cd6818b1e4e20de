package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseSize reads a byte count: a number with an optional unit (K, M, G, T,
// with or without "iB"/"B"; all powers of 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	upper := strings.ToUpper(t)
	upper = strings.TrimSuffix(strings.TrimSuffix(upper, "B"), "I")
	mult := int64(1)
	if n := len(upper); n > 0 {
		switch upper[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			upper = upper[:n-1]
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(upper), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 256MiB)", s)
	}
	if v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large (the most is 8EiB)", s)
	}
	return v * mult, nil
}
