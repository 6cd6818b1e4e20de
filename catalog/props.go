package catalog

import "slices"

// DefaultProtocol names the attributes of a catalog whose Options give no
// Protocol: the ResourceSync ones.
const DefaultProtocol = "resourcesync"

// Property is one attribute a protocol publishes about a resource beyond
// what every resource has (URI, length, time, type, hashes): the
// filesystem serves it as the extended attribute
// user.<Protocol()>.<Name>, without knowing what it means.
type Property struct {
	Name, Value string
}

// Protocol returns the name under which the resources' attributes are
// served (Options.Protocol, else DefaultProtocol).
func (c *Catalog) Protocol() string { return c.protocol }

// setProps stores a file's properties and reports whether they changed.
// Called with c.mu held for writing.
func (c *Catalog) setProps(id NodeID, ps []Property) bool {
	if slices.Equal(c.props[id], ps) {
		return false
	}
	if len(ps) == 0 {
		delete(c.props, id)
		return true
	}
	c.props[id] = slices.Clone(ps)
	return true
}
