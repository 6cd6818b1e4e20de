package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

// A snapshot saved before Channel had JSON tags wrote its keys capitalised;
// it must still restore the channels a remount subscribes to.
func TestDecodeStateWithOldChannelKeys(t *testing.T) {
	saved := `{"version":1,"origin":"http://s.example","entry":"http://s.example/.well-known/resourcesync",
		"sets":[{"URL":"http://s.example/cl.xml","Hubs":[{"Capability":"change-notification","Topic":"http://s.example/cl.xml#n","Hub":"http://hub.example/"}]}],
		"positions":{}}`
	st, err := DecodeState([]byte(saved))
	require.NoError(t, err)
	require.Len(t, st.Sets, 1)
	assert.Equal(t, []Channel{{Capability: resourcesync.CapChangeNotification, Topic: "http://s.example/cl.xml#n", Hub: "http://hub.example/"}}, st.Sets[0].Hubs)
}
