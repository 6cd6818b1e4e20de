package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSizes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 1<<20 - 1: "1024.0 KiB",
		1 << 20: "1.0 MiB", 987654321: "941.9 MiB", 5 << 30: "5.0 GiB", 3 << 40: "3.0 TiB",
		1 << 50: "1.0 PiB", 1 << 60: "1.0 EiB", math.MaxInt64: "8.0 EiB",
	} {
		assert.Equal(t, want, Size(n), n)
	}
	assert.Equal(t, "1023 B", ExactSize(1023))
	assert.Equal(t, "5368709121 bytes, 5.0 GiB", ExactSize(5<<30+1))
	assert.Equal(t, "3.6", SizeIn(3774873, 7235174))
	assert.Equal(t, "100", SizeIn(100, 200), "bytes below a KiB")
	assert.Equal(t, "0.5", SizeIn(512<<30, 1<<40))
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 999: "999", 1000: "1,000", 40000: "40,000", 1234567: "1,234,567", -4422: "-4,422",
		math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		assert.Equal(t, want, Thousands(n), n)
	}
}

// TestJSON: every --json is indented by two spaces and ends in a newline;
// another process's JSON is indented alike, fields this binary does not
// know kept.
func TestJSON(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, JSON(&out, struct {
		A int      `json:"a"`
		B []string `json:"b"`
	}{1, []string{"<x>"}}))
	assert.Equal(t, "{\n  \"a\": 1,\n  \"b\": [\n    \"\\u003cx\\u003e\"\n  ]\n}\n", out.String())

	out.Reset()
	require.NoError(t, IndentJSON(&out, []byte(`{"a":1,"unknown":{"b":[2]}}`)))
	assert.Equal(t, "{\n  \"a\": 1,\n  \"unknown\": {\n    \"b\": [\n      2\n    ]\n  }\n}\n", out.String())
	assert.Error(t, IndentJSON(&out, []byte(`{"a":`)))
}
