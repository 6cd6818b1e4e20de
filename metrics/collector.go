package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"rsfs/mountutil"
)

// collector reads the mount's counters at each scrape: the same accessors
// as its status, so nothing is counted twice.
type collector struct{ r *Mount }

// Collector returns the Prometheus collector of the mount.
func (m *Mount) Collector() prometheus.Collector { return &collector{r: m} }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descRequests     = desc("rsfs_http_requests_total", "HTTP requests sent, by origin, kind (get, range, head) and status (0: no response).", "origin", "kind", "status")
	descBytes        = desc("rsfs_http_response_bytes_total", "HTTP response body bytes read, by origin.", "origin")
	descRetries      = desc("rsfs_http_retries_total", "HTTP retries and resumed range bodies.")
	descCacheHits    = desc("rsfs_cache_hits_total", "Blocks found cached, by tier (memory; disk, asked on each memory miss).", "tier")
	descCacheMisses  = desc("rsfs_cache_misses_total", "Blocks not found cached, by tier.", "tier")
	descCacheEvict   = desc("rsfs_cache_evictions_total", "Blocks evicted to stay within the tier's size, by tier.", "tier")
	descCacheBytes   = desc("rsfs_cache_bytes", "Bytes cached now, by tier.", "tier")
	descVerify       = desc("rsfs_verification_failures_total", "Contents whose bytes disagreed with their published length or hash.")
	descHashed       = desc("rsfs_hashed_bytes_total", "Bytes hashed to verify contents against their published hashes (a byte hashed twice counts twice); a large file read again is not hashed again.")
	descReadErrors   = desc("rsfs_read_errors_total", "Reads answered with EIO.")
	descPageStores   = desc("rsfs_kernel_page_stores_total", "Small files warmed ahead of their reader and handed to the kernel's page cache, to be read there with no READ.")
	descPolls        = desc("rsfs_polls_total", "Polls of the Change Lists (of an Atom-PMH feed: of its subscription document), by result (ok, error).", "result")
	descPollDuration = desc("rsfs_last_poll_duration_seconds", "How long the last poll took.")
	descPollTime     = desc("rsfs_last_poll_timestamp_seconds", "When the last poll started (Unix time).")
	descApplied      = desc("rsfs_changes_applied_total", "Changes applied, polled or pushed.")
	descReloads      = desc("rsfs_reloads_total", "Reloads of the Resource Lists.")
	descDrift        = desc("rsfs_drift_repaired_total", "Resources drift repair corrected: the tree differed from a changed Resource List plus the changes after it.")
	descDegraded     = desc("rsfs_set_degraded_documents", "Documents of a set that failed at the last poll, by set.", "set")
	descPushState    = desc("rsfs_push_subscription", "1 for a push subscription's state now, by hub, topic and state (subscribed, renewing, failed, retrying).", "hub", "topic", "state")
	descPushed       = desc("rsfs_notifications_pushed_total", "Notifications pushed by hubs.")
	descLag          = desc("rsfs_change_lag_seconds", "How far a set's position is behind the newest change its Change Lists listed (a feed's harvest mark behind the newest atom:updated read), by set (a feed: its URL).", "set")
	descPosition     = desc("rsfs_set_position_timestamp_seconds", "A set's follow position: every change up to it is applied (a feed's: its harvest mark) (Unix time), by set.", "set")
	descResources    = desc("rsfs_resources", "Resources in the tree.")
	descSetResources = desc("rsfs_set_resources", "Resources in the tree, by the resource set that lists them.", "set")
	descHeld         = desc("rsfs_held", "1 while changes are held back (rsfs hold), else 0.")
	descThrottled    = desc("rsfs_fetch_throttled_total", "Answers that said slow down, by origin and status (429, 503; 0: no answer within the request timeout).", "origin", "code")
	descLimitFlight  = desc("rsfs_fetch_limit_in_flight", "Requests allowed in flight to an origin now, by origin.", "origin")
	descLimitRate    = desc("rsfs_fetch_limit_rate", "Requests a second allowed to an origin now, by origin (0: unlimited; a maximum rate the mount was given applies besides).", "origin")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descBytes, descRetries, descCacheHits, descCacheMisses,
		descCacheEvict, descCacheBytes, descVerify, descHashed, descReadErrors, descPageStores, descPolls, descPollDuration, descPollTime,
		descApplied, descReloads, descDrift, descDegraded, descPushState, descPushed, descLag, descPosition, descResources, descSetResources, descHeld, descThrottled, descLimitFlight, descLimitRate} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	client := c.r.Client
	for _, t := range client.Traffic() {
		counter(descRequests, float64(t.Requests), t.Origin, t.Kind, strconv.Itoa(t.Status))
	}
	for o, n := range client.BytesByOrigin() {
		counter(descBytes, float64(n), o)
	}
	counter(descRetries, float64(client.Stats().Retries))
	for _, p := range client.Pacing() {
		for code, n := range p.Counts {
			counter(descThrottled, float64(n), p.Origin, strconv.Itoa(code))
		}
		gauge(descLimitFlight, float64(p.Limit), p.Origin)
		gauge(descLimitRate, p.Rate, p.Origin)
	}

	cs := c.r.Cache.Stats()
	counter(descCacheHits, float64(cs.Hits), "memory")
	counter(descCacheMisses, float64(cs.Misses), "memory")
	counter(descCacheEvict, float64(cs.Evictions), "memory")
	gauge(descCacheBytes, float64(cs.Bytes), "memory")
	if c.r.DiskMax > 0 {
		counter(descCacheHits, float64(cs.DiskHits), "disk")
		counter(descCacheMisses, float64(cs.DiskLookups-cs.DiskHits), "disk")
		counter(descCacheEvict, float64(cs.DiskEvictions), "disk")
		gauge(descCacheBytes, float64(cs.DiskBytes), "disk")
	}
	counter(descVerify, float64(c.r.Cache.VerifyFailures(0, 0).Total))
	counter(descHashed, float64(cs.Hashed))
	counter(descReadErrors, float64(c.r.ReadErrors.Since(0, 0).Total))
	if c.r.PageStores != nil {
		counter(descPageStores, float64(c.r.PageStores()))
	}

	st := c.r.Follower.Status()
	counter(descPolls, float64(st.Polls-st.PollFailures), "ok")
	counter(descPolls, float64(st.PollFailures), "error")
	if !st.LastPoll.IsZero() {
		gauge(descPollDuration, st.LastPollTook.Seconds())
		gauge(descPollTime, float64(st.LastPoll.UnixNano())/1e9)
	}
	counter(descApplied, float64(st.Applied))
	counter(descReloads, float64(st.Reloads))
	counter(descDrift, float64(st.Drift))
	counter(descPushed, float64(st.Pushed))
	for _, p := range st.Push {
		gauge(descPushState, 1, p.Hub, p.Topic, p.State)
	}
	for _, s := range st.Sets {
		gauge(descLag, s.Behind(time.Now(), c.r.Started).Seconds(), s.Set)
		gauge(descDegraded, float64(len(s.Degraded)), s.Set)
		gauge(descPosition, float64(s.Position.UnixNano())/1e9, s.Set)
		gauge(descSetResources, float64(s.Resources), s.Set)
	}
	gauge(descResources, float64(c.r.Count()))
	held := 0.0
	if _, ok := mountutil.HeldUntil(c.r.HoldFile); ok {
		held = 1
	}
	gauge(descHeld, held)
}
