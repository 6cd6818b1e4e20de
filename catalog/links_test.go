package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelName(t *testing.T) {
	for rel, want := range map[string]string{
		"describedby": "describedby",
		"DescribedBy": "describedby",
		"http://www.openarchives.org/rs/terms/patch":  "patch",
		"http://www.openarchives.org/rs/terms/patch/": "patch",
		"http://purl.org/dc/terms/#isPartOf":          "isPartOf",
		"urn:example:rel":                             "rel",
		"memento":                                     "memento",
		"":                                            "",
		"two words":                                   "",
	} {
		assert.Equal(t, want, RelName(rel), rel)
	}
}
