package mountutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseFuseConf(t *testing.T) {
	for _, c := range []struct {
		conf  string
		allow bool
		max   int
	}{
		{"", false, 1000},
		{"# user_allow_other\n#mount_max = 5\n", false, 1000},
		{"user_allow_other\n", true, 1000},
		{"  user_allow_other  # for the backups\nmount_max = 3\n", true, 3},
		{"user_allow_other_not\nmount_max=7", false, 7},
	} {
		allow, max := parseFuseConf(c.conf)
		assert.Equal(t, c.allow, allow, "%q", c.conf)
		assert.Equal(t, c.max, max, "%q", c.conf)
	}
}
