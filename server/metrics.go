package server

import (
	"fmt"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus series of docs/CONTRACT.md, Operations. One Metrics serves
// one catalogue; register it once per registry.
type Metrics struct {
	requests     *prometheus.CounterVec
	incomplete   *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	authFailures *prometheus.CounterVec
	reloads      *prometheus.CounterVec
	answerCache  *prometheus.CounterVec
	// accessLogLines counts the requests the access log wrote a line for,
	// and those its policy left out.
	accessLogLines                     *prometheus.CounterVec
	accessLogWritten, accessLogSkipped prometheus.Counter
}

// NewMetrics registers catalogd's series with reg: the request and
// authentication series the Server records, the reload counter the caller
// records with Reloaded, and the catalogue's own series, read from live at
// each scrape so that they always describe the catalogue being served.
func NewMetrics(reg prometheus.Registerer, live *store.Live) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogd_http_requests_total",
			Help: "HTTP requests answered, by route and status.",
		}, []string{"route", "status"}),
		incomplete: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogd_http_responses_incomplete_total",
			Help: "Answers whose body could not be written whole (the write timeout, a client gone), by route; they count in catalogd_http_requests_total by the status sent.",
		}, []string{"route"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "catalogd_http_request_duration_seconds",
			Help: "Time from the request's headers to the last byte of its answer, by route.",
			// From 100 µs, where a cached getCard lands, to 2.5 s.
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogd_auth_failures_total",
			Help: "Requests refused for their bearer token, by reason.",
		}, []string{"reason"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogd_catalog_reloads_total",
			Help: "Attempts to switch to a newly imported catalogue, by result.",
		}, []string{"result"}),
		answerCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogd_answer_cache_lookups_total",
			Help: "Catalogue answers looked up in the answer cache, by result (hit, miss).",
		}, []string{"result"}),
		accessLogLines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogd_access_log_lines_total",
			Help: "Requests answered, by whether the access log wrote their line (written) or its policy, --access-log, left it out (skipped).",
		}, []string{"result"}),
	}
	m.accessLogWritten = m.accessLogLines.WithLabelValues("written")
	m.accessLogSkipped = m.accessLogLines.WithLabelValues("skipped")
	// The reload results exist from the start, so that a rate() over them
	// works before the first reload.
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	for _, c := range []prometheus.Collector{m.requests, m.incomplete, m.duration, m.authFailures, m.reloads, m.answerCache, m.accessLogLines, newCatalogCollector(live)} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: register metrics: %w", err)
		}
	}
	return m, nil
}

// CountDroppedLogLines exports dropped, the number of log lines the log
// output did not take (logbuf.Writer drops them rather than hold the
// server up), as catalogd_log_lines_dropped_total.
func (m *Metrics) CountDroppedLogLines(reg prometheus.Registerer, dropped func() uint64) error {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "catalogd_log_lines_dropped_total",
		Help: "Log lines (access log and errors) dropped because the log output did not take them; a line saying how many follows.",
	}, func() float64 { return float64(dropped()) })
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("server: register metrics: %w", err)
	}
	return nil
}

// Reloaded counts an attempt to switch catalogues.
func (m *Metrics) Reloaded(ok bool) {
	if ok {
		m.reloads.WithLabelValues("success").Inc()
	} else {
		m.reloads.WithLabelValues("failure").Inc()
	}
}

// catalogCollector describes the catalogue being served: which generation,
// when it was imported, and how much it holds per zone.
type catalogCollector struct {
	live     *store.Live
	info     *prometheus.Desc
	imported *prometheus.Desc
	age      *prometheus.Desc
	sets     *prometheus.Desc
	cards    *prometheus.Desc
}

func newCatalogCollector(live *store.Live) *catalogCollector {
	return &catalogCollector{
		live:     live,
		info:     prometheus.NewDesc("catalogd_catalog_info", "The catalogue generation being served (always 1).", []string{"generation"}, nil),
		imported: prometheus.NewDesc("catalogd_catalog_imported_timestamp_seconds", "When the catalogue being served was imported, in Unix seconds.", nil, nil),
		age:      prometheus.NewDesc("catalogd_catalog_age_seconds", "Seconds since the catalogue being served was imported.", nil, nil),
		sets:     prometheus.NewDesc("catalogd_catalog_sets", "Sets in the catalogue being served, by zone.", []string{"zone"}, nil),
		cards:    prometheus.NewDesc("catalogd_catalog_cards", "Cards in the catalogue being served, by zone.", []string{"zone"}, nil),
	}
}

func (c *catalogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.info
	ch <- c.imported
	ch <- c.age
	ch <- c.sets
	ch <- c.cards
}

func (c *catalogCollector) Collect(ch chan<- prometheus.Metric) {
	// Info stays valid after its catalogue closes, so it need not be held.
	info := c.live.Current().Info()
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, info.Generation)
	ch <- prometheus.MustNewConstMetric(c.imported, prometheus.GaugeValue, float64(info.ImportedAt.UnixMilli())/1e3)
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, time.Since(info.ImportedAt).Seconds())
	for _, z := range info.Zones {
		ch <- prometheus.MustNewConstMetric(c.sets, prometheus.GaugeValue, float64(z.Sets), z.Zone)
		ch <- prometheus.MustNewConstMetric(c.cards, prometheus.GaugeValue, float64(z.Cards), z.Zone)
	}
}
