package mountutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFixHelperEnv(t *testing.T) {
	homes := map[int]string{0: "/root", 1000: "/home/alice"}
	owners := map[string]int{"/root": 0, "/home/alice": 1000, "/srv/shared": 1000}
	cases := []struct {
		name      string
		uid       int
		env       map[string]string
		want      map[string]string
		wantFixed []string
	}{
		{"mount(8) for a user: no PATH, root's HOME", 1000, map[string]string{"HOME": "/root"},
			map[string]string{"PATH": DefaultPath, "HOME": "/home/alice"}, []string{"PATH=" + DefaultPath, "HOME=/home/alice"}},
		{"no HOME", 1000, map[string]string{"PATH": "/bin"},
			map[string]string{"PATH": "/bin", "HOME": "/home/alice"}, []string{"HOME=/home/alice"}},
		{"a login shell's", 1000, map[string]string{"PATH": "/bin", "HOME": "/home/alice"},
			map[string]string{"PATH": "/bin", "HOME": "/home/alice"}, nil},
		{"a HOME of their own elsewhere", 1000, map[string]string{"PATH": "/bin", "HOME": "/srv/shared"},
			map[string]string{"PATH": "/bin", "HOME": "/srv/shared"}, nil},
		{"a HOME that does not exist is left for its error", 1000, map[string]string{"PATH": "/bin", "HOME": "/nonexistent"},
			map[string]string{"PATH": "/bin", "HOME": "/nonexistent"}, nil},
		{"root without HOME keeps /var/cache", 0, map[string]string{},
			map[string]string{"PATH": DefaultPath}, []string{"PATH=" + DefaultPath}},
		{"a user without a passwd entry", 2000, map[string]string{"HOME": "/root"},
			map[string]string{"PATH": DefaultPath, "HOME": "/root"}, []string{"PATH=" + DefaultPath}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range c.env {
				env[k] = v
			}
			fixed := fixHelperEnv(func(k string) string { return env[k] },
				func(k, v string) error { env[k] = v; return nil }, c.uid,
				func(uid int) (string, bool) { h, ok := homes[uid]; return h, ok },
				func(p string) (int, bool) { o, ok := owners[p]; return o, ok })
			assert.Equal(t, c.want, env)
			assert.Equal(t, c.wantFixed, fixed)
		})
	}
}
