package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// AIPerf's config v2 (schemaVersion "2.0"): an envelope (random_seed, multi_run, sweep) around
// a benchmark: body (models, endpoint, tokenizer, dataset, phases, artifacts, otel), each key
// mapped onto the flag that means the same (docs/profile.md "Config file" has the table).
// Keys are snake_case or camelCase, as AIPerf takes them. A key AIPerf has that nothing here
// means (plot, variables, a second dataset, more than one profiling phase...) is an error at
// its line, never a silent drop.

// isV2 says whether root is a config v2 envelope; line > 0 is where a schemaVersion of
// another value is.
func isV2(root *yaml.Node) (v2 bool, line int) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := snake(root.Content[i].Value); k == "schema_version" {
			v := root.Content[i+1]
			if v.Value == "2.0" || v.Value == "2" {
				return true, 0
			}
			return false, v.Line
		}
	}
	return false, 0
}

// snake turns camelCase into snake_case (AIPerf takes both).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// v2Section maps the keys of one v2 mapping: to a flag (plain values), to a handler, or to a
// nested section.
type v2Section map[string]v2Key

// v2Key is how one v2 key is read.
type v2Key struct {
	flag    string                                 // the flag its scalar value sets
	seconds bool                                   // a duration: 30, "30s", "5m", "1h" in seconds
	sub     v2Section                              // a nested mapping
	fn      func(p *parser, k, v *yaml.Node) error // anything else
	ignore  bool                                   // accepted, and means nothing more here (a name)
}

var (
	v2Envelope = v2Section{
		"schema_version": {ignore: true},
		"random_seed":    {flag: "random-seed"},
		"benchmark":      {sub: v2Benchmark},
		"multi_run": {sub: v2Section{
			"num_runs":                   {flag: "num-profile-runs"},
			"cooldown_seconds":           {flag: "profile-run-cooldown-seconds"},
			"confidence_level":           {flag: "confidence-level"},
			"disable_warmup_after_first": {fn: v2BoolFlag("profile-run-disable-warmup-after-first", "no-profile-run-disable-warmup-after-first")},
			"set_consistent_seed":        {fn: v2BoolFlag("set-consistent-seed", "no-set-consistent-seed")},
		}},
		"sweep": {fn: (*parser).v2Sweep},
	}
	v2Benchmark = v2Section{
		"model":  {fn: (*parser).v2Models},
		"models": {fn: (*parser).v2Models},
		"endpoint": {sub: v2Section{
			"url":                     {fn: v2List("url")},
			"urls":                    {fn: v2List("url")},
			"type":                    {flag: "endpoint-type"},
			"streaming":               {flag: "streaming"},
			"path":                    {flag: "custom-endpoint"},
			"api_key":                 {flag: "api-key"},
			"timeout":                 {flag: "request-timeout-seconds", seconds: true},
			"wait_for_model_timeout":  {flag: "wait-for-model-timeout", seconds: true},
			"wait_for_model_mode":     {flag: "wait-for-model-mode"},
			"wait_for_model_interval": {flag: "wait-for-model-interval", seconds: true},
			"url_strategy":            {flag: "url-strategy"},
			"use_legacy_max_tokens":   {flag: "use-legacy-max-tokens"},
			"use_server_token_count":  {flag: "use-server-token-count"},
			"connection_reuse":        {flag: "connection-reuse-strategy"},
			"request_content_type":    {flag: "request-content-type"},
			"session_header":          {flag: "session-header"},
			"transport":               {flag: "transport"},
			"headers":                 {fn: v2Map("header")},
			"extra":                   {fn: v2Map("extra-inputs")},
		}},
		"tokenizer": {sub: v2Section{
			"name":              {flag: "tokenizer"},
			"revision":          {flag: "tokenizer-revision"},
			"trust_remote_code": {flag: "tokenizer-trust-remote-code"},
		}},
		"dataset":  {fn: (*parser).v2Dataset},
		"datasets": {fn: (*parser).v2Dataset},
		"phases":   {fn: (*parser).v2Phases},
		"artifacts": {sub: v2Section{
			"dir":            {flag: "artifact-dir"},
			"prefix":         {flag: "profile-export-prefix"},
			"export_level":   {flag: "export-level"},
			"slice_duration": {flag: "slice-duration", seconds: true},
		}},
		"otel": {fn: (*parser).v2Otel},
	}
	v2Dataset = v2Section{
		"name":     {ignore: true},
		"type":     {fn: (*parser).v2DatasetType},
		"entries":  {flag: "num-dataset-entries"},
		"path":     {flag: "input-file"},
		"format":   {flag: "custom-dataset-type"},
		"sampling": {flag: "dataset-sampling-strategy"},
		"prompts": {sub: v2Section{
			"isl":        {fn: v2MeanStd("synthetic-input-tokens-mean", "synthetic-input-tokens-stddev")},
			"osl":        {fn: v2MeanStd("output-tokens-mean", "output-tokens-stddev")},
			"block_size": {flag: "isl-block-size"},
			"batch_size": {flag: "prompt-batch-size"},
			"corpus":     {flag: "prompt-corpus"},
		}},
		"prefix_prompts": {sub: v2Section{
			"pool_size":            {flag: "prompt-prefix-pool-size"},
			"length":               {flag: "prompt-prefix-length"},
			"shared_system_length": {flag: "shared-system-prompt-length"},
			"user_context_length":  {flag: "user-context-prompt-length"},
		}},
		"turns":                        {fn: v2MeanStd("conversation-turn-mean", "conversation-turn-stddev")},
		"turn_delay":                   {fn: v2MeanStd("conversation-turn-delay-mean", "conversation-turn-delay-stddev")},
		"turn_delay_ratio":             {flag: "conversation-turn-delay-ratio"},
		"osl":                          {fn: v2MeanStd("output-tokens-mean", "output-tokens-stddev")},
		"block_size":                   {flag: "isl-block-size"},
		"inter_turn_delay_cap_seconds": {flag: "inter-turn-delay-cap-seconds"},
		"synthesis": {sub: v2Section{
			"speedup_ratio":          {flag: "synthesis-speedup-ratio"},
			"prefix_len_multiplier":  {flag: "synthesis-prefix-len-multiplier"},
			"prefix_root_multiplier": {flag: "synthesis-prefix-root-multiplier"},
			"prompt_len_multiplier":  {flag: "synthesis-prompt-len-multiplier"},
			"output_len_multiplier":  {flag: "synthesis-output-len-multiplier"},
			"max_isl":                {flag: "synthesis-max-isl"},
			"max_osl":                {flag: "synthesis-max-osl"},
		}},
		"images": {sub: v2Section{
			"batch_size":      {flag: "image-batch-size"},
			"width":           {fn: v2MeanStd("image-width-mean", "image-width-stddev")},
			"height":          {fn: v2MeanStd("image-height-mean", "image-height-stddev")},
			"format":          {flag: "image-format"},
			"source":          {flag: "image-source"},
			"source_sampling": {flag: "image-source-sampling"},
		}},
		"audio": {sub: v2Section{
			"batch_size":   {flag: "audio-batch-size"},
			"length":       {fn: v2MeanStd("audio-length-mean", "audio-length-stddev")},
			"format":       {flag: "audio-format"},
			"depths":       {fn: v2List("audio-depths")},
			"sample_rates": {fn: v2List("audio-sample-rates")},
			"channels":     {flag: "audio-num-channels"},
		}},
		"video": {sub: v2Section{
			"batch_size": {flag: "video-batch-size"},
			"duration":   {flag: "video-duration"},
			"fps":        {flag: "video-fps"},
			"width":      {flag: "video-width"},
			"height":     {flag: "video-height"},
			"synth_type": {flag: "video-synth-type"},
			"format":     {flag: "video-format"},
			"codec":      {flag: "video-codec"},
		}},
	}
)

// v2 reads a config v2 envelope.
func (p *parser) v2(root *yaml.Node) error { return p.v2Mapping(root, v2Envelope, "") }

// v2Mapping reads mapping m by section s; path names it in errors ("benchmark.endpoint").
func (p *parser) v2Mapping(m *yaml.Node, s v2Section, path string) error {
	if m.Kind != yaml.MappingNode {
		return p.errf(m, "%s: want a mapping", strings.TrimSuffix(path, "."))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := snake(k.Value)
		key, ok := s[name]
		if !ok {
			return p.errf(k, "unknown key %s%s%s", path, k.Value, known(s))
		}
		if at, dup := seen[name]; dup {
			return p.errf(k, "%s%s again (line %d gave it first)", path, k.Value, at)
		}
		seen[name] = k.Line
		switch {
		case key.ignore:
		case key.sub != nil:
			if err := p.v2Mapping(v, key.sub, path+k.Value+"."); err != nil {
				return err
			}
		case key.fn != nil:
			if err := key.fn(p, k, v); err != nil {
				return err
			}
		default:
			if err := p.v2Scalar(key.flag, key.seconds, path+k.Value, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// known lists a section's keys for an error line.
func known(s v2Section) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return " (this tool reads: " + strings.Join(keys, ", ") + ")"
}

// v2Scalar sets flag from scalar v (key k at path); seconds reads AIPerf's durations.
func (p *parser) v2Scalar(flag string, seconds bool, path string, k, v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode {
		return p.errf(v, "%s: want a value", path)
	}
	if v.Tag == "!!null" {
		return nil
	}
	val := v.Value
	if seconds {
		s, err := v2Seconds(val)
		if err != nil {
			return p.errf(v, "%s %q: %v", path, val, err)
		}
		val = s
	}
	p.out = append(p.out, Setting{Flag: flag, Values: []string{val}, Key: path, Line: k.Line})
	return nil
}

// v2Seconds reads an AIPerf duration (a number of seconds, or 500ms, 30s, 5m, 1h, 1h30m) as
// seconds; inf stays inf.
func v2Seconds(v string) (string, error) {
	if _, err := strconv.ParseFloat(v, 64); err == nil || strings.EqualFold(v, "inf") {
		return v, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return "", fmt.Errorf("want seconds or a duration such as 30s, 5m")
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64), nil
}

// v2List sets a repeatable or list flag from a value or a list of values.
func v2List(flag string) func(p *parser, k, v *yaml.Node) error {
	return func(p *parser, k, v *yaml.Node) error {
		s := Setting{Flag: flag, Key: k.Value, Line: k.Line}
		switch v.Kind {
		case yaml.ScalarNode:
			s.Values = []string{v.Value}
		case yaml.SequenceNode:
			vals, err := p.scalarList(k, v)
			if err != nil {
				return err
			}
			s.Values = vals
		default:
			return p.errf(v, "%s: want a value or a list", k.Value)
		}
		if f, ok := p.flags.Lookup(flag); ok && !f.Repeatable {
			s.Join = true
		}
		p.out = append(p.out, s)
		return nil
	}
}

// v2Map sets a key-value flag (headers, extra inputs) from a mapping.
func v2Map(flag string) func(p *parser, k, v *yaml.Node) error {
	return func(p *parser, k, v *yaml.Node) error {
		if v.Kind != yaml.MappingNode {
			return p.errf(v, "%s: want a mapping", k.Value)
		}
		vals, err := p.mapValues(flag, k, v)
		if err != nil {
			return err
		}
		p.out = append(p.out, Setting{Flag: flag, Values: vals, Key: k.Value, Line: k.Line})
		return nil
	}
}

// v2BoolFlag sets the flag for true, its no- form for false.
func v2BoolFlag(yes, no string) func(p *parser, k, v *yaml.Node) error {
	return func(p *parser, k, v *yaml.Node) error {
		b, err := strconv.ParseBool(v.Value)
		if err != nil || v.Kind != yaml.ScalarNode {
			return p.errf(v, "%s: want true or false", k.Value)
		}
		flag := yes
		if !b {
			flag = no
		}
		p.out = append(p.out, Setting{Flag: flag, Values: []string{"true"}, Key: k.Value, Line: k.Line})
		return nil
	}
}

// v2MeanStd reads a distribution: a number (the mean) or {mean, stddev} (AIPerf's other
// distribution kinds are refused by name).
func v2MeanStd(mean, stddev string) func(p *parser, k, v *yaml.Node) error {
	return func(p *parser, k, v *yaml.Node) error {
		if v.Kind == yaml.ScalarNode {
			return p.v2Scalar(mean, false, k.Value, k, v)
		}
		return p.v2Mapping(v, v2Section{
			"mean":   {flag: mean},
			"stddev": {flag: stddev},
			"type": {fn: func(p *parser, k, v *yaml.Node) error {
				if v.Value != "normal" {
					return p.errf(v, "%s: a %s distribution is not supported here: give mean and stddev (normal)", k.Value, v.Value)
				}
				return nil
			}},
		}, k.Value+".")
	}
}

// v2Models reads model (a name) or models (a list of names, or {items: [{name}], strategy}).
func (p *parser) v2Models(k, v *yaml.Node) error {
	var names []string
	add := func(n *yaml.Node) error {
		switch n.Kind {
		case yaml.ScalarNode:
			names = append(names, n.Value)
		case yaml.MappingNode:
			var name string
			if err := p.v2Mapping(n, v2Section{"name": {fn: func(_ *parser, _, v *yaml.Node) error { name = v.Value; return nil }},
				"weight": {fn: func(p *parser, k, _ *yaml.Node) error {
					return p.errf(k, "models: weights are not supported here (round_robin or random)")
				}}}, "models."); err != nil {
				return err
			}
			names = append(names, name)
		default:
			return p.errf(n, "models: want names")
		}
		return nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		names = append(names, v.Value)
	case yaml.SequenceNode:
		for _, e := range v.Content {
			if err := add(e); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if err := p.v2Mapping(v, v2Section{
			"items": {fn: func(_ *parser, _, items *yaml.Node) error {
				if items.Kind != yaml.SequenceNode {
					return p.errf(items, "models.items: want a list")
				}
				for _, e := range items.Content {
					if err := add(e); err != nil {
						return err
					}
				}
				return nil
			}},
			"strategy": {flag: "model-selection-strategy"},
		}, "models."); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return p.errf(v, "%s: no model named", k.Value)
	}
	p.out = append(p.out, Setting{Flag: "model", Values: []string{strings.Join(names, ",")}, Key: k.Value, Line: k.Line})
	return nil
}

// v2Dataset reads dataset (a mapping) or datasets (a list of one).
func (p *parser) v2Dataset(k, v *yaml.Node) error {
	if v.Kind == yaml.SequenceNode {
		if len(v.Content) != 1 {
			return p.errf(v, "datasets: exactly one dataset (as AIPerf takes today), got %d", len(v.Content))
		}
		v = v.Content[0]
	}
	return p.v2Mapping(v, v2Dataset, "dataset.")
}

// v2DatasetType accepts synthetic and file datasets; public ones need the network.
func (p *parser) v2DatasetType(k, v *yaml.Node) error {
	switch v.Value {
	case "synthetic", "file":
		return nil
	}
	return p.errf(v, "dataset.type %s: only synthetic and file datasets are read here (a public dataset needs the network: download it, then give its path)", v.Value)
}

// v2Phases reads the phases: one mapping (the profiling phase), or a list with at most one
// warmup and one profiling phase (by kind, else by name).
func (p *parser) v2Phases(k, v *yaml.Node) error {
	if v.Kind == yaml.MappingNode {
		return p.v2Phase(v, false)
	}
	if v.Kind != yaml.SequenceNode {
		return p.errf(v, "phases: want a phase or a list of phases")
	}
	var warm, prof *yaml.Node
	for _, ph := range v.Content {
		if ph.Kind != yaml.MappingNode {
			return p.errf(ph, "phases: want a mapping per phase")
		}
		kind, name := "", ""
		for i := 0; i+1 < len(ph.Content); i += 2 {
			switch snake(ph.Content[i].Value) {
			case "kind":
				kind = ph.Content[i+1].Value
			case "name":
				name = ph.Content[i+1].Value
			}
		}
		if kind == "" {
			kind = name
		}
		switch kind {
		case "warmup":
			if warm != nil {
				return p.errf(ph, "phases: one warmup phase here (line %d is one already)", warm.Line)
			}
			warm = ph
		case "profiling":
			if prof != nil {
				return p.errf(ph, "phases: one profiling phase here (line %d is one already): run the others as separate profiles", prof.Line)
			}
			prof = ph
		default:
			return p.errf(ph, "phases: phase %q has no kind: give kind: warmup or kind: profiling", name)
		}
	}
	if warm != nil {
		if err := p.v2Phase(warm, true); err != nil {
			return err
		}
	}
	if prof != nil {
		return p.v2Phase(prof, false)
	}
	return nil
}

// v2Phase reads one phase into the profile's flags, or the warmup's.
func (p *parser) v2Phase(ph *yaml.Node, warmup bool) error {
	flag := func(profile, warm string) v2Key {
		if warmup {
			if warm == "" {
				return v2Key{fn: func(p *parser, k, _ *yaml.Node) error {
					return p.errf(k, "phases.warmup.%s: a warmup has no %s here", k.Value, k.Value)
				}}
			}
			return v2Key{flag: warm, seconds: strings.HasSuffix(warm, "duration") || strings.HasSuffix(warm, "period")}
		}
		return v2Key{flag: profile, seconds: strings.HasSuffix(profile, "duration") || strings.HasSuffix(profile, "period")}
	}
	ramp := func(profile, warm string) v2Key {
		f := flag(profile, warm)
		if f.fn != nil {
			return f
		}
		return v2Key{fn: func(p *parser, k, v *yaml.Node) error {
			if v.Kind == yaml.MappingNode {
				return p.v2Mapping(v, v2Section{"duration": {flag: f.flag, seconds: true}}, k.Value+".")
			}
			return p.v2Scalar(f.flag, true, k.Value, k, v)
		}}
	}
	var typ string
	for i := 0; i+1 < len(ph.Content); i += 2 {
		if snake(ph.Content[i].Value) == "type" {
			typ = ph.Content[i+1].Value
		}
	}
	rate := flag("request-rate", "warmup-request-rate")
	users := v2Key{fn: func(p *parser, k, _ *yaml.Node) error {
		return p.errf(k, "phases.%s.users: needs type user_centric", k.Value)
	}}
	switch typ {
	case "", "concurrency":
	case "constant", "poisson", "gamma":
		pattern := flag("arrival-pattern", "warmup-arrival-pattern")
		p.out = append(p.out, Setting{Flag: pattern.flag, Values: []string{typ}, Key: "type", Line: ph.Line})
	case "fixed_schedule":
		if warmup {
			return p.errf(ph, "phases.warmup.type fixed_schedule: a warmup is planned in the profile's mode")
		}
		p.out = append(p.out, Setting{Flag: "fixed-schedule", Values: []string{"true"}, Key: "type", Line: ph.Line})
	case "user_centric":
		if warmup {
			return p.errf(ph, "phases.warmup.type user_centric: a warmup is planned in the profile's mode")
		}
		rate, users = v2Key{flag: "user-centric-rate"}, v2Key{flag: "num-users"}
	default:
		return p.errf(ph, "phases: type %q is not supported here (concurrency, constant, poisson, gamma, fixed_schedule, user_centric)", typ)
	}
	name := "profiling"
	if warmup {
		name = "warmup"
	}
	return p.v2Mapping(ph, v2Section{
		"name":                {ignore: true},
		"kind":                {ignore: true},
		"type":                {ignore: true},
		"concurrency":         flag("concurrency", "warmup-concurrency"),
		"prefill_concurrency": flag("prefill-concurrency", "warmup-prefill-concurrency"),
		"rate":                rate,
		"users":               users,
		"requests":            flag("request-count", "warmup-request-count"),
		"sessions":            flag("num-sessions", "num-warmup-sessions"),
		"duration":            flag("benchmark-duration", "warmup-duration"),
		"grace_period":        flag("benchmark-grace-period", "warmup-grace-period"),
		"smoothness":          flag("arrival-smoothness", ""),
		"concurrency_ramp":    ramp("concurrency-ramp-duration", "warmup-concurrency-ramp-duration"),
		"prefill_ramp":        ramp("prefill-concurrency-ramp-duration", "warmup-prefill-concurrency-ramp-duration"),
		"rate_ramp":           ramp("request-rate-ramp-duration", "warmup-request-rate-ramp-duration"),
		"auto_offset":         flag("fixed-schedule-auto-offset", ""),
		"start_offset":        flag("fixed-schedule-start-offset", ""),
		"end_offset":          flag("fixed-schedule-end-offset", ""),
		"cancellation": {sub: v2Section{
			"rate":  flag("request-cancellation-rate", ""),
			"delay": flag("request-cancellation-delay", ""),
		}},
		"adaptive_scale": profileOnly(warmup, (*parser).v2Adaptive),
		"sla":            profileOnly(warmup, (*parser).v2SLA),
		"exclude_from_results": {fn: func(p *parser, k, v *yaml.Node) error {
			if b, err := strconv.ParseBool(v.Value); err != nil || b != warmup {
				return p.errf(v, "phases.%s.exclude_from_results %s: a warmup is never measured and a profiling phase always is", name, v.Value)
			}
			return nil
		}},
	}, "phases."+name+".")
}

// profileOnly is a phase key only the profiling phase has (adaptive scale, its SLAs).
func profileOnly(warmup bool, fn func(p *parser, k, v *yaml.Node) error) v2Key {
	if warmup {
		return v2Key{fn: func(p *parser, k, _ *yaml.Node) error {
			return p.errf(k, "phases.warmup.%s: a warmup has no %s here", k.Value, k.Value)
		}}
	}
	return v2Key{fn: fn}
}

// v2Sweep reads sweep: {type: grid, parameters: {concurrency: [...], rate: [...]}}: the two
// sweeps this tool runs, as the flags' list syntax.
func (p *parser) v2Sweep(k, v *yaml.Node) error {
	return p.v2Mapping(v, v2Section{
		"type": {fn: func(p *parser, k, v *yaml.Node) error {
			if v.Value != "grid" {
				return p.errf(v, "sweep.type %s: only grid sweeps are run here", v.Value)
			}
			return nil
		}},
		"parameters": {sub: v2Section{
			"concurrency":                  {fn: v2List("concurrency")},
			"phases.profiling.concurrency": {fn: v2List("concurrency")},
			"rate":                         {fn: v2List("request-rate")},
			"phases.profiling.rate":        {fn: v2List("request-rate")},
		}},
	}, "sweep.")
}

// v2Otel reads the otel section: the live export's URL, streams, attributes and provider.
func (p *parser) v2Otel(k, v *yaml.Node) error {
	var streams []string
	var line int
	stream := func(name string) func(p *parser, k, v *yaml.Node) error {
		return func(p *parser, k, v *yaml.Node) error {
			b, err := strconv.ParseBool(v.Value)
			if err != nil {
				return p.errf(v, "otel.%s: want true or false", k.Value)
			}
			if b {
				streams = append(streams, name)
			}
			line = k.Line
			return nil
		}
	}
	if err := p.v2Mapping(v, v2Section{
		"metrics_url":                {flag: "otel-url"},
		"stream_metrics_enabled":     {fn: stream("metrics")},
		"stream_timing_enabled":      {fn: stream("timing")},
		"custom_resource_attributes": {fn: v2Map("otel-resource-attributes")},
		"gen_ai_provider":            {flag: "gen-ai-provider"},
	}, "otel."); err != nil {
		return err
	}
	if len(streams) > 0 {
		p.out = append(p.out, Setting{Flag: "stream", Values: streams, Join: true, Key: "otel.stream_*", Line: line})
	}
	return nil
}
