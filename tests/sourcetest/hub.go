package sourcetest

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	rs "rsfs/resourcesync"
)

// NotificationTopic is set k's change-notification topic URI (the channel a
// Destination subscribes to at Config.Hub).
func (s *Source) NotificationTopic(k int) string {
	return s.CapabilityListURL(k) + "#change-notification"
}

// publishLocked sends a Change Notification for c to the hub, in the
// background, as Framework Notification 1.0 section 4.1 describes: a POST
// of the payload with Link rel="self" naming the topic.
func (s *Source) publishLocked(set int, c *change) {
	if s.cfg.Hub == "" {
		return
	}
	e := s.changeEntry(c)
	e.MD.Datetime = c.at
	h := rs.Header{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapChangeNotification, Length: rs.NoLength},
		Links: []rs.Link{{Rel: "up", Href: s.CapabilityListURL(set), Length: rs.NoLength}}}
	var buf bytes.Buffer
	if err := rs.WriteDocument(&buf, &rs.Document{Header: h, Entries: []rs.Entry{e}}); err != nil {
		slog.Error("sourcetest: notification payload", "err", err)
		return
	}
	topic, hub, capList := s.NotificationTopic(set), s.cfg.Hub, s.CapabilityListURL(set)
	go func() {
		req, err := http.NewRequest(http.MethodPost, hub, &buf)
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub", <%s>; rel="resourcesync"`, topic, hub, capList))
		client := &http.Client{Timeout: 10 * time.Second}
		resp, err := client.Do(req)
		if err != nil {
			slog.Warn("sourcetest: publishing to the hub", "err", err)
			return
		}
		resp.Body.Close()
	}()
}
