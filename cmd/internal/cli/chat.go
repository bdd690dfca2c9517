package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/chat"
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/internal/version"
	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/probe"
	"github.com/llmbench/llmbench/tokenizer"
)

// DefaultChatPrompt is the message `chat --quick` sends when it is given none.
const DefaultChatPrompt = "say hello in one short sentence"

// Chat is the flag set of `chat` (AIPerf's aiperf chat): the endpoint flags of plan and
// replay under their names and meanings, and chat's own --quick, --no-history and
// --system-prompt.
type Chat struct {
	// FS holds the flags.
	FS           *pflag.FlagSet
	model        *string
	url          *string
	endpointType *string
	custom       *string
	systemPrompt *string
	quick        *bool
	noHistory    *bool
	apiKey       *string
	apiKeyFile   *string
	headers      *[]string
	tok          *string
	tokRevision  *string
	serverTokens *bool
	legacyMax    *bool
	maxTokens    *int
	timeout      *float64
	caFile       *string
	insecure     *bool
	maxResponse  *int64
	help         *bool
	helpAll      *bool
	version      *bool
}

// NewChat defines the chat flags on a new set.
func NewChat() *Chat {
	c := &Chat{FS: NewFlagSet("chat")}
	fs := c.FS
	c.model = fs.StringP("model", "m", "", "model name put in every request body (required)")
	c.url = fs.StringP("url", "u", "http://localhost:8000", "base URL of the server (http:// is added when missing)")
	c.endpointType = fs.String("endpoint-type", "chat", "API type: a streaming one that takes messages (chat, responses, anthropic_messages)")
	c.custom = fs.String("custom-endpoint", "", "URL path overriding the endpoint type's default")
	c.systemPrompt = fs.String("system-prompt", "", "system message put first in every request")
	c.quick = fs.BoolP("quick", "q", false, "send one message and exit: the arguments joined, else \""+DefaultChatPrompt+"\"")
	c.noHistory = fs.Bool("no-history", false, "send each message on its own, without the conversation so far (ignored with --quick)")
	c.apiKey = fs.String("api-key", "", "API key sent as 'Authorization: Bearer KEY' (default $OPENAI_API_KEY)")
	c.apiKeyFile = fs.String("api-key-file", "", "read the API key from this file (trailing newline trimmed)")
	c.headers = fs.StringArrayP("header", "H", nil, "extra request header 'Name: value' (repeatable)")
	c.tok = fs.String("tokenizer", "", `tokenizer for the client-side token counts: "builtin", a tokenizer.json path or folder, or a HuggingFace model id (default: the model id if it has a "/", else builtin)`)
	c.tokRevision = fs.String("tokenizer-revision", "", `branch, tag or commit of a HuggingFace tokenizer ("": main)`)
	c.serverTokens = fs.Bool("use-server-token-count", false, "take the token counts from the server's usage fields instead of the tokenizer")
	c.legacyMax = fs.Bool("use-legacy-max-tokens", false, "send max_tokens instead of max_completion_tokens")
	c.maxTokens = fs.Int("output-tokens-mean", 0, "requested output tokens per reply (0: the model decides)")
	c.timeout = fs.Float64("request-timeout-seconds", replay.DefaultRequestTimeout.Seconds(), "per-turn timeout, connect to last byte")
	c.caFile = fs.String("tls-ca-cert", "", "PEM file of CAs to trust for https URLs")
	c.insecure = fs.Bool("tls-insecure-skip-verify", false, "accept any server certificate")
	c.maxResponse = fs.Int64("max-response-bytes", replay.DefaultMaxResponseBytes, "most bytes of one reply stored")
	c.help = fs.BoolP("help", "h", false, "print this help")
	c.helpAll = AddHelpAll(fs)
	c.version = AddVersion(fs)
	return c
}

// Help tells whether -h was given.
func (c *Chat) Help() bool { return *c.help || *c.helpAll }

// HelpAll tells whether --help-all was given.
func (c *Chat) HelpAll() bool { return *c.helpAll }

// Version tells whether --version was given.
func (c *Chat) Version() bool { return *c.version }

// Options checks the flags and the arguments (the --quick message) and loads the tokenizer.
func (c *Chat) Options(args []string, getenv func(string) string) (*chat.Options, error) {
	o := &chat.Options{Model: strings.TrimSpace(*c.model), SystemPrompt: *c.systemPrompt, MaxTokens: *c.maxTokens,
		LegacyMaxTokens: *c.legacyMax, Quick: *c.quick, NoHistory: *c.noHistory, UseServerTokenCount: *c.serverTokens}
	if o.Model == "" {
		return nil, errors.New("--model is required")
	}
	if len(args) > 0 && !o.Quick {
		return nil, fmt.Errorf("unexpected argument %q: a message on the command line goes with --quick; without it, type the messages", args[0])
	}
	o.Prompt = strings.Join(args, " ")
	if o.Quick && strings.TrimSpace(o.Prompt) == "" {
		o.Prompt = DefaultChatPrompt
	}
	ep, err := endpoint.Lookup(*c.endpointType)
	if err != nil {
		return nil, fmt.Errorf("--endpoint-type: %w", err)
	}
	switch ep.Name {
	case "chat", "responses", "anthropic_messages":
	default:
		return nil, fmt.Errorf("--endpoint-type %s: chat talks to a streaming API that takes messages: chat, responses or anthropic_messages", ep.Name)
	}
	if *c.custom != "" {
		ep.Path, ep.StreamPath = *c.custom, ""
	}
	o.Endpoint = ep
	if *c.maxTokens < 0 {
		return nil, fmt.Errorf("--output-tokens-mean %d: want 0 (the model decides) or more", *c.maxTokens)
	}
	timeout, err := timespan.Seconds("request-timeout-seconds", *c.timeout, false)
	if err != nil {
		return nil, err
	}
	if *c.maxResponse <= 0 || *c.maxResponse > replay.MaxResponseBytesLimit {
		return nil, fmt.Errorf("--max-response-bytes %d: must be between 1 and %d (1 GiB)", *c.maxResponse, replay.MaxResponseBytesLimit)
	}
	key := *c.apiKey
	if *c.apiKeyFile != "" {
		if Changed(c.FS, "api-key") {
			return nil, errors.New("--api-key and --api-key-file are mutually exclusive")
		}
		if key, err = replay.ReadAPIKey(*c.apiKeyFile); err != nil {
			return nil, err
		}
	}
	if key == "" {
		key = getenv("OPENAI_API_KEY")
	}
	redact.AddCredentials(key, *c.headers) // a refusing server's body may echo them
	if err := replay.CheckURL("url", *c.url); err != nil {
		return nil, err
	}
	o.Single = probe.SingleOptions{URL: *c.url, Path: ep.RequestPath(true), Headers: ep.Headers, UserHeaders: *c.headers,
		APIKey: key, TLSCAFile: *c.caFile, TLSInsecureSkipVerify: *c.insecure, Timeout: timeout,
		MaxResponseBytes: *c.maxResponse, UserAgent: "llmbench-chat/" + version.String()}
	if !o.UseServerTokenCount {
		spec := plan.TokenizerSpec(*c.tok, o.Model)
		lo := tokenizer.EnvLoadOptions(getenv)
		lo.Revision = *c.tokRevision
		if o.Tokenizer, err = tokenizer.LoadWithOptions(spec, lo); err != nil {
			return nil, fmt.Errorf("--tokenizer: %w", err)
		}
	}
	return o, nil
}
