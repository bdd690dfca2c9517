package plan

import (
	"encoding/json"
	"fmt"
)

// Apply converts the flags that need it onto o, the options a compile gets (a copy of f.O):
// the seed, the offsets given, the input source's checks, the extra inputs and the payload
// template. given tells whether a flag was set on the command line. AIPerf passes the
// template and the response field as extra inputs: Apply lifts them onto their flags, so
// they are recorded in the spec under the flag names, where analyze looks for the response
// field. Errors name the flag.
func (f *Flags) Apply(o *Options, given func(name string) bool) error {
	o.Seed = f.Seed
	if given("fixed-schedule-start-offset") {
		o.FixedScheduleStartOffset = &f.StartOffset
	}
	if given("fixed-schedule-end-offset") {
		o.FixedScheduleEndOffset = &f.EndOffset
	}
	if err := f.Source.Check(); err != nil {
		return err
	}
	if f.Source.InputFile == "" {
		for _, name := range []string{"custom-dataset-type", "isl-block-size", "synthesis-prompt-len-multiplier", "synthesis-prefix-len-multiplier", "synthesis-prefix-root-multiplier", "synthesis-output-len-multiplier", "synthesis-max-isl", "synthesis-max-osl"} {
			if given(name) {
				return fmt.Errorf("--%s needs --input-file", name)
			}
		}
	}
	extra, err := ParseExtraInputs(f.ExtraInputs)
	if err != nil {
		return err
	}
	lift := []struct {
		key, flag string
		ptr       *string
	}{{"payload_template", "payload-template", &f.PayloadTemplate}, {"response_field", "response-field", &f.O.ResponseField}}
	for _, l := range lift {
		v, ok := extra[l.key]
		if !ok || (l.key == "payload_template" && o.EndpointType != "template") ||
			(l.key == "response_field" && o.EndpointType != "raw" && o.EndpointType != "template") {
			continue
		}
		str, isStr := v.(string)
		if !isStr && l.key == "payload_template" {
			// A template without actions can be valid JSON, which ParseExtraInputs decoded:
			// take it back as text.
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("--extra-inputs %s: %w", l.key, err)
			}
			str, isStr = string(b), true
		}
		if !isStr {
			return fmt.Errorf("--extra-inputs %s: want a string", l.key)
		}
		// The same value is what an earlier Apply put there (profile applies once to check
		// the flags and once per compile).
		if (given(l.flag) || f.lifted[l.flag]) && *l.ptr != str {
			return fmt.Errorf("--%s and --extra-inputs %s are both given", l.flag, l.key)
		}
		*l.ptr = str
		if f.lifted == nil {
			f.lifted = map[string]bool{}
		}
		f.lifted[l.flag] = true
		delete(extra, l.key)
	}
	if len(extra) == 0 {
		extra = nil
	}
	o.ExtraInputs = extra
	o.PayloadTemplate, err = ReadPayloadTemplate(f.PayloadTemplate)
	return err
}
