package profile

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/mmapds"
)

// Stimulus is what AIPerf names a run's load by.
type Stimulus struct {
	Concurrency int
	Rate        float64
	Fixed       bool
	UserRate    float64
	Users       int
}

// ArtifactName is AIPerf's artifact directory name <model>-<service kind>-<endpoint>-<stimulus>,
// e.g. Qwen_Qwen3-0.6B-openai-chat-concurrency1 or ...-request_rate10.
func ArtifactName(model, endpoint string, s Stimulus) string {
	return ModelEndpoint(model, endpoint) + "-" + StimulusName(s)
}

// ModelEndpoint is the <model>-openai-<endpoint> part of an artifact directory's name.
func ModelEndpoint(model, endpoint string) string {
	model, _, _ = strings.Cut(model, ",") // a --model list is named by its first model, as AIPerf names it
	if model = strings.TrimSpace(model); model == "" {
		model = "model"
	}
	model = strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(model)
	return model + "-openai-" + endpoint
}

// StimulusName is the <stimulus> part of an artifact directory's name: concurrency8,
// request_rate10, fixed_schedule, ...
func StimulusName(s Stimulus) string {
	var parts []string
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case s.Fixed:
		parts = append(parts, "fixed_schedule")
	case s.UserRate > 0:
		parts = append(parts, fmt.Sprintf("user_centric-users%d-qps%s", s.Users, strconv.FormatFloat(s.UserRate, 'f', 1, 64)))
	default:
		if s.Concurrency > 0 {
			parts = append(parts, "concurrency"+strconv.Itoa(s.Concurrency))
		}
		if s.Rate > 0 {
			parts = append(parts, "request_rate"+num(s.Rate))
		}
		if len(parts) == 0 {
			parts = append(parts, "concurrency1")
		}
	}
	return strings.Join(parts, "-")
}

// RunName names the artifact directory of a profile that compiles its plans: a sweep or a
// search by what it varies (MultiName), one point by its stimulus s (ArtifactName).
func RunName(model, endpoint string, s Stimulus, o *SweepOptions) string {
	if multi := MultiName(o); multi != "" {
		return ModelEndpoint(model, endpoint) + "-" + multi
	}
	return ArtifactName(model, endpoint, s)
}

// MultiName is the <stimulus> part of the artifact directory of a sweep or a search, "" for
// a single point: concurrency_sweep, request_rate_sweep, max_concurrency_under_sla, ...
func MultiName(o *SweepOptions) string {
	if o.Search != "" {
		return strings.ReplaceAll(o.Search, "-", "_")
	}
	if len(o.Points) < 2 {
		return ""
	}
	var parts []string
	seen := map[string]bool{}
	for _, p := range o.Points {
		for _, prm := range p {
			if !seen[prm.Name] {
				seen[prm.Name] = true
				parts = append(parts, prm.Name+"_sweep")
			}
		}
	}
	return strings.Join(parts, "-")
}

// PlanArtifactName names the artifact directory of a shared plan from the flags it was
// compiled with, and says whether the plan streams.
func PlanArtifactName(path string) (string, bool, error) {
	p, err := mmapds.Open(path, mmapds.Options{SkipHash: true})
	if err != nil {
		return "", false, fmt.Errorf("--plan: %w", err)
	}
	defer p.Close()
	m := p.Meta()
	num := func(k string) float64 {
		switch v := m.Spec[k].(type) {
		case float64:
			return v
		case int64:
			return float64(v)
		case uint64:
			return float64(v)
		case int:
			return float64(v)
		}
		return 0
	}
	fixed, _ := m.Spec["fixed-schedule"].(bool)
	return ArtifactName(m.Model, m.Endpoint, Stimulus{int(num("concurrency")), num("request-rate"), fixed, num("user-centric-rate"), int(num("num-users"))}), m.Streaming, nil
}

// NewDir creates base, or base-2, base-3, ... when it exists: an artifact directory is
// never reused.
func NewDir(base string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", fmt.Errorf("--artifact-dir: %w", err)
	}
	for i := 1; i < math.MaxInt16; i++ {
		dir := base
		if i > 1 {
			dir = base + "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("artifact directory: %w", err)
		}
	}
	return "", fmt.Errorf("artifact directory %s: every suffix up to -%d is taken", base, math.MaxInt16-1)
}
