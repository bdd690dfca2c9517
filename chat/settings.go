package chat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/probe"
	"github.com/llmbench/llmbench/tokenizer"
)

// DefaultPrompt is the message `chat --quick` sends when it is given none.
const DefaultPrompt = "say hello in one short sentence"

// Settings are chat's options as given (the command's flags, named in the errors), before
// they are checked and turned into Options.
type Settings struct {
	Model, URL, EndpointType, CustomEndpoint, SystemPrompt string
	Quick, NoHistory                                       bool
	// APIKey and APIKeyFile (mutually exclusive: APIKeySet tells whether --api-key was given).
	APIKey, APIKeyFile string
	APIKeySet          bool
	Headers            []string
	// Tokenizer and TokenizerRevision are --tokenizer (plan.TokenizerSpec's default) and
	// --tokenizer-revision.
	Tokenizer, TokenizerRevision         string
	UseServerTokenCount, LegacyMaxTokens bool
	MaxTokens                            int
	// TimeoutSeconds is --request-timeout-seconds, MaxResponseBytes --max-response-bytes.
	TimeoutSeconds   float64
	TLSCAFile        string
	TLSInsecure      bool
	MaxResponseBytes int64
}

// Options checks s and the arguments (the --quick message), reads the API key (its file,
// else $OPENAI_API_KEY through getenv) and loads the tokenizer. Errors name the flag.
func (s *Settings) Options(args []string, getenv func(string) string) (*Options, error) {
	o := &Options{Model: strings.TrimSpace(s.Model), SystemPrompt: s.SystemPrompt, MaxTokens: s.MaxTokens,
		LegacyMaxTokens: s.LegacyMaxTokens, Quick: s.Quick, NoHistory: s.NoHistory, UseServerTokenCount: s.UseServerTokenCount}
	if o.Model == "" {
		return nil, errors.New("--model is required")
	}
	if len(args) > 0 && !o.Quick {
		return nil, fmt.Errorf("unexpected argument %q: a message on the command line goes with --quick; without it, type the messages", args[0])
	}
	o.Prompt = strings.Join(args, " ")
	if o.Quick && strings.TrimSpace(o.Prompt) == "" {
		o.Prompt = DefaultPrompt
	}
	ep, err := endpoint.Lookup(s.EndpointType)
	if err != nil {
		return nil, fmt.Errorf("--endpoint-type: %w", err)
	}
	switch ep.Name {
	case "chat", "responses", "anthropic_messages":
	default:
		return nil, fmt.Errorf("--endpoint-type %s: chat talks to a streaming API that takes messages: chat, responses or anthropic_messages", ep.Name)
	}
	if s.CustomEndpoint != "" {
		ep.Path, ep.StreamPath = s.CustomEndpoint, ""
	}
	o.Endpoint = ep
	if s.MaxTokens < 0 {
		return nil, fmt.Errorf("--output-tokens-mean %d: want 0 (the model decides) or more", s.MaxTokens)
	}
	timeout, err := timespan.Seconds("request-timeout-seconds", s.TimeoutSeconds, false)
	if err != nil {
		return nil, err
	}
	if s.MaxResponseBytes <= 0 || s.MaxResponseBytes > replay.MaxResponseBytesLimit {
		return nil, fmt.Errorf("--max-response-bytes %d: must be between 1 and %d (1 GiB)", s.MaxResponseBytes, replay.MaxResponseBytesLimit)
	}
	key := s.APIKey
	if s.APIKeyFile != "" {
		if s.APIKeySet {
			return nil, errors.New("--api-key and --api-key-file are mutually exclusive")
		}
		if key, err = replay.ReadAPIKey(s.APIKeyFile); err != nil {
			return nil, err
		}
	}
	if key == "" {
		key = getenv("OPENAI_API_KEY")
	}
	redact.AddCredentials(key, s.Headers) // a refusing server's body may echo them
	if err := replay.CheckURL("url", s.URL); err != nil {
		return nil, err
	}
	o.Single = probe.SingleOptions{URL: s.URL, Path: ep.RequestPath(true), Headers: ep.Headers, UserHeaders: s.Headers,
		APIKey: key, TLSCAFile: s.TLSCAFile, TLSInsecureSkipVerify: s.TLSInsecure, Timeout: timeout,
		MaxResponseBytes: s.MaxResponseBytes, UserAgent: "llmbench-chat/" + version.String()}
	if !o.UseServerTokenCount {
		spec := plan.TokenizerSpec(s.Tokenizer, o.Model)
		lo := tokenizer.EnvLoadOptions(getenv)
		lo.Revision = s.TokenizerRevision
		if o.Tokenizer, err = tokenizer.LoadWithOptions(spec, lo); err != nil {
			return nil, fmt.Errorf("--tokenizer: %w", err)
		}
	}
	return o, nil
}
