package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// ErrNotPrometheus is wrapped by Parse's error when a page is not Prometheus text or
// OpenMetrics; ErrJSON when it is JSON (TensorRT-LLM's /metrics, whose Prometheus page is
// /prometheus/metrics).
var (
	ErrNotPrometheus = errors.New("not Prometheus text or OpenMetrics")
	ErrJSON          = fmt.Errorf("%w: the page is JSON", ErrNotPrometheus)
)

// Parse reads a metrics page with expfmt: OpenMetrics when the Content-Type says so, else
// the Prometheus text format. Samples come out one per exposition line: histograms as
// _bucket (label le), _sum and _count; summaries as the quantiles (label quantile), _sum and
// _count.
func Parse(body []byte, contentType string) ([]Sample, error) {
	return parse(context.Background(), body, contentType)
}

// ctxReader reads r until ctx is done, so that parsing a page stops with its deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// parse is Parse, stopped when ctx is done: the error then wraps ctx's, never
// ErrNotPrometheus (a page cut short by a deadline says nothing about what it is).
func parse(ctx context.Context, body []byte, contentType string) ([]Sample, error) {
	if looksJSON(body, contentType) {
		return nil, ErrJSON
	}
	format := responseFormat(contentType)
	if format.FormatType() != expfmt.TypeOpenMetrics {
		// A text page with an odd or missing Content-Type is still tried as text: the
		// parser, not the header, decides.
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(ctxReader{ctx, bytes.NewReader(body)}, format)
	var out []Sample
	families := 0
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if err == io.EOF {
			break
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("parsing the page: %w", cerr)
			}
			return nil, fmt.Errorf("%w: %v", ErrNotPrometheus, err)
		}
		families++
		out = appendFamily(out, &mf, format.FormatType() == expfmt.TypeOpenMetrics)
	}
	if families == 0 && len(bytes.TrimSpace(body)) > 0 && !isComments(body) {
		return nil, fmt.Errorf("%w: no metric family found", ErrNotPrometheus)
	}
	return out, nil
}

// responseFormat is expfmt's reading of a Content-Type.
func responseFormat(contentType string) expfmt.Format {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	return expfmt.ResponseFormat(h)
}

// isOpenMetrics reports whether a page of this Content-Type is parsed as OpenMetrics.
func isOpenMetrics(contentType string) bool {
	return responseFormat(contentType).FormatType() == expfmt.TypeOpenMetrics
}

// isComments reports whether every non-blank line is a comment (an empty exposition).
func isComments(b []byte) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

func looksJSON(body []byte, contentType string) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return true
	}
	b := bytes.TrimSpace(body)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

func labelsOf(m *dto.Metric, extra ...string) map[string]string {
	if len(m.GetLabel()) == 0 && len(extra) == 0 {
		return nil
	}
	l := make(map[string]string, len(m.GetLabel())+len(extra)/2)
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func formatBound(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// appendFamily flattens one family into samples.
func appendFamily(out []Sample, mf *dto.MetricFamily, openMetrics bool) []Sample {
	name := mf.GetName()
	typ := strings.ToLower(mf.GetType().String())
	add := func(sample string, labels map[string]string, v float64) {
		out = append(out, Sample{Family: name, Type: typ, Name: sample, Labels: labels, V: v})
	}
	for _, m := range mf.GetMetric() {
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			sample := name
			if openMetrics && !strings.HasSuffix(name, "_total") {
				sample += "_total"
			}
			add(sample, labelsOf(m), m.GetCounter().GetValue())
		case dto.MetricType_GAUGE:
			add(name, labelsOf(m), m.GetGauge().GetValue())
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			inf := false
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() > 1e308 {
					inf = true
				}
				add(name+"_bucket", labelsOf(m, "le", formatLE(b.GetUpperBound())), float64(b.GetCumulativeCount()))
			}
			if !inf {
				add(name+"_bucket", labelsOf(m, "le", "+Inf"), float64(h.GetSampleCount()))
			}
			add(name+"_sum", labelsOf(m), h.GetSampleSum())
			add(name+"_count", labelsOf(m), float64(h.GetSampleCount()))
		case dto.MetricType_SUMMARY:
			s := m.GetSummary()
			for _, q := range s.GetQuantile() {
				add(name, labelsOf(m, "quantile", formatBound(q.GetQuantile())), q.GetValue())
			}
			add(name+"_sum", labelsOf(m), s.GetSampleSum())
			add(name+"_count", labelsOf(m), float64(s.GetSampleCount()))
		default:
			add(name, labelsOf(m), m.GetUntyped().GetValue())
		}
	}
	return out
}

func formatLE(v float64) string {
	if v > 1e308 {
		return "+Inf"
	}
	return formatBound(v)
}
