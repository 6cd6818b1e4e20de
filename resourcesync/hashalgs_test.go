package resourcesync

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHashAlgs(t *testing.T) {
	var names []string
	for _, a := range HashAlgs() {
		names = append(names, a.Name)
		assert.Equal(t, a.Size, a.New().Size(), a.Name)
	}
	assert.Equal(t, []string{"md5", "sha-1", "sha-256"}, names, "weakest first")
	assert.Equal(t, []int{16, 20, 32}, []int{HashAlgs()[0].Size, HashAlgs()[1].Size, HashAlgs()[2].Size})
	assert.Equal(t, 2, HashAlgIndex("sha-256"))
	assert.Equal(t, -1, HashAlgIndex("SHA-256"), "a parsed Hash holds the name in lower case")
	assert.Equal(t, -1, HashAlgIndex("sha-512"))

	HashAlgs()[0].Name = "changed"
	assert.Equal(t, "md5", HashAlgs()[0].Name, "callers get a copy")
}
