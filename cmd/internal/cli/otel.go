package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/otelpush"
	"github.com/llmbench/llmbench/replay"
)

// otelFlags are AIPerf's live OpenTelemetry flags, shared by replay and profile (through the
// replay flag set): the coordinator pushes the run's metrics while it lasts (package otelpush).
type otelFlags struct {
	fs       *pflag.FlagSet
	url      *string
	stream   *[]string
	attrs    *[]string
	provider *string
}

func addOtelFlags(fs *pflag.FlagSet) *otelFlags {
	return &otelFlags{fs: fs,
		url:      fs.String("otel-url", "", "push the run's metrics live to this OTLP/HTTP collector (host, host:port or URL; /v1/metrics added when there is no path), named by the GenAI semantic conventions; an unreachable collector is one warning"),
		stream:   fs.StringSlice("stream", nil, "with --otel-url, what to push: metrics (per-request GenAI histograms), timing (request counters, in flight) or default (both); a list or repeated"),
		attrs:    fs.StringSlice("otel-resource-attributes", nil, "with --otel-url, key=value resource attributes added to every metric (a list or repeated)"),
		provider: fs.String("gen-ai-provider", "", "with --otel-url, gen_ai.provider.name (default: inferred from the --url host as AIPerf does, else _OTHER)"),
	}
}

// observer is the live export when --otel-url is given; the other OTel flags
// need it. warn receives the export's one-line warnings.
func (f *otelFlags) observer(warn io.Writer) (replay.Observer, error) {
	if *f.url == "" {
		for _, n := range []string{"stream", "otel-resource-attributes", "gen-ai-provider"} {
			if Changed(f.fs, n) {
				return nil, fmt.Errorf("--%s needs --otel-url", n)
			}
		}
		return nil, nil
	}
	po := otelpush.Options{URL: *f.url, Provider: strings.TrimSpace(*f.provider), Warn: warn, Name: "replay",
		ServiceVersion: version.String(), LoadTokenizer: loadTokenizer}
	for _, s := range *f.stream {
		switch strings.TrimSpace(s) {
		case otelpush.StreamMetrics:
			po.Metrics = true
		case otelpush.StreamTiming:
			po.Timing = true
		case otelpush.StreamDefault:
			po.Metrics, po.Timing = true, true
		default:
			return nil, fmt.Errorf("--stream %q: want %s, %s or %s", s, otelpush.StreamMetrics, otelpush.StreamTiming, otelpush.StreamDefault)
		}
	}
	for _, kv := range *f.attrs {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, fmt.Errorf("--otel-resource-attributes %q: want key=value", kv)
		}
		if po.ResourceAttributes == nil {
			po.ResourceAttributes = map[string]string{}
		}
		po.ResourceAttributes[k] = strings.TrimSpace(v)
	}
	p, err := otelpush.New(po)
	if err != nil {
		return nil, fmt.Errorf("--otel-url: %w", err)
	}
	return p, nil
}
