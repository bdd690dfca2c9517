package judge

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/yamlline"
)

// GatesFileVersion is the version of the --gates file format (docs/metrics.md "Agreed gates").
const GatesFileVersion = 1

// AgreedGate is one gate of a --gates file: the expression, who owns it and why it is set
// where it is, as a team agrees them.
type AgreedGate struct {
	Gate   string `json:"gate"`
	Owner  string `json:"owner"`
	Reason string `json:"reason"`
	// Parsed is Gate parsed; Line is the gate's line in the file.
	Parsed Gate `json:"-"`
	Line   int  `json:"-"`
}

// GatesFile is a --gates file:
//
//	version: 1
//	gates:
//	  - gate: time_to_first_token.p99<400
//	    owner: serving-team
//	    reason: p99 TTFT SLO of the chat product
type GatesFile struct {
	Version int          `json:"version"`
	Gates   []AgreedGate `json:"gates"`
	// Path is where the file was read from.
	Path string `json:"-"`
}

// ParseGatesFile parses a --gates file against the built-in metrics (ParseGatesFileOf).
func ParseGatesFile(data []byte, path string) (*GatesFile, error) {
	return ParseGatesFileOf(nil, data, path)
}

// ParseGatesFile parses a --gates file strictly: unknown fields, a missing owner or reason, a
// bad gate expression (ParseGateOf, on reg's metrics; nil: the built-ins) or another version
// are refused, naming the file and the line.
func ParseGatesFileOf(reg *analyze.Registry, data []byte, path string) (*GatesFile, error) {
	var f GatesFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		msg := err.Error()
		if m := yamlline.UnknownField.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("--gates %s line %d: unknown field %q (want version, gates; each gate: gate, owner, reason)", path, yamlline.KeyLine(data, m[1], 0), m[1])
		}
		// The YAML parser's errors carry their own "line N".
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "error converting YAML to JSON: "), "yaml: ")
		return nil, fmt.Errorf("--gates %s: %s", path, msg)
	}
	f.Path = path
	if f.Version != GatesFileVersion {
		if f.Version == 0 {
			return nil, fmt.Errorf("--gates %s line %d: no version: want version: %d", path, max(yamlline.KeyLine(data, "version", 0), 1), GatesFileVersion)
		}
		return nil, fmt.Errorf("--gates %s line %d: version %d is not supported (this build reads version %d)", path, yamlline.KeyLine(data, "version", 0), f.Version, GatesFileVersion)
	}
	if len(f.Gates) == 0 {
		return nil, fmt.Errorf("--gates %s: no gates", path)
	}
	after := 0
	for i := range f.Gates {
		g := &f.Gates[i]
		g.Line = yamlline.KeyLine(data, "gate", after)
		after = g.Line
		where := fmt.Sprintf("--gates %s line %d", path, g.Line)
		if strings.TrimSpace(g.Gate) == "" {
			return nil, fmt.Errorf("%s: gate %d has no gate expression", where, i+1)
		}
		p, err := ParseGateOf(reg, g.Gate)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		g.Parsed = p
		if strings.TrimSpace(g.Owner) == "" {
			return nil, fmt.Errorf("%s: gate %q has no owner: an agreed gate names who owns it", where, g.Gate)
		}
		if strings.TrimSpace(g.Reason) == "" {
			return nil, fmt.Errorf("%s: gate %q has no reason: an agreed gate says why it is set there", where, g.Gate)
		}
	}
	return &f, nil
}

// Agreed returns the agreed entry for gate expression expr.
func (f *GatesFile) Agreed(expr string) (*AgreedGate, bool) {
	if f == nil {
		return nil, false
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for i := range f.Gates {
		if norm(f.Gates[i].Gate) == norm(expr) {
			return &f.Gates[i], true
		}
	}
	return nil, false
}

// String names the file and its gate count, for evidence.
func (f *GatesFile) String() string {
	return f.Path + " (" + strconv.Itoa(len(f.Gates)) + " gates)"
}
