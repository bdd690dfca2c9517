package cli

import (
	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/chat"
	"github.com/llmbench/llmbench/replay"
)

// Chat is the flag set of `chat` (AIPerf's aiperf chat): the endpoint flags of plan and
// replay under their names and meanings, and chat's own --quick, --no-history and
// --system-prompt, parsed into chat.Settings.
type Chat struct {
	// FS holds the flags.
	FS                     *pflag.FlagSet
	s                      chat.Settings
	help, helpAll, version *bool
}

// NewChat defines the chat flags on a new set.
func NewChat() *Chat {
	c := &Chat{FS: NewFlagSet("chat")}
	fs, s := c.FS, &c.s
	fs.StringVarP(&s.Model, "model", "m", "", "model name put in every request body (required)")
	fs.StringVarP(&s.URL, "url", "u", "http://localhost:8000", "base URL of the server (http:// is added when missing)")
	fs.StringVar(&s.EndpointType, "endpoint-type", "chat", "API type: a streaming one that takes messages (chat, responses, anthropic_messages)")
	fs.StringVar(&s.CustomEndpoint, "custom-endpoint", "", "URL path overriding the endpoint type's default")
	fs.StringVar(&s.SystemPrompt, "system-prompt", "", "system message put first in every request")
	fs.BoolVarP(&s.Quick, "quick", "q", false, "send one message and exit: the arguments joined, else \""+chat.DefaultPrompt+"\"")
	fs.BoolVar(&s.NoHistory, "no-history", false, "send each message on its own, without the conversation so far (ignored with --quick)")
	fs.StringVar(&s.APIKey, "api-key", "", "API key sent as 'Authorization: Bearer KEY' (default $OPENAI_API_KEY)")
	fs.StringVar(&s.APIKeyFile, "api-key-file", "", "read the API key from this file (trailing newline trimmed)")
	fs.StringArrayVarP(&s.Headers, "header", "H", nil, "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&s.Tokenizer, "tokenizer", "", `tokenizer for the client-side token counts: "builtin", a tokenizer.json path or folder, or a HuggingFace model id (default: the model id if it has a "/", else builtin)`)
	fs.StringVar(&s.TokenizerRevision, "tokenizer-revision", "", `branch, tag or commit of a HuggingFace tokenizer ("": main)`)
	fs.BoolVar(&s.UseServerTokenCount, "use-server-token-count", false, "take the token counts from the server's usage fields instead of the tokenizer")
	fs.BoolVar(&s.LegacyMaxTokens, "use-legacy-max-tokens", false, "send max_tokens instead of max_completion_tokens")
	fs.IntVar(&s.MaxTokens, "output-tokens-mean", 0, "requested output tokens per reply (0: the model decides)")
	fs.Float64Var(&s.TimeoutSeconds, "request-timeout-seconds", replay.DefaultRequestTimeout.Seconds(), "per-turn timeout, connect to last byte")
	fs.StringVar(&s.TLSCAFile, "tls-ca-cert", "", "PEM file of CAs to trust for https URLs")
	fs.BoolVar(&s.TLSInsecure, "tls-insecure-skip-verify", false, "accept any server certificate")
	fs.Int64Var(&s.MaxResponseBytes, "max-response-bytes", replay.DefaultMaxResponseBytes, "most bytes of one reply stored")
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

// Options checks the flags and the arguments (chat.Settings.Options).
func (c *Chat) Options(args []string, getenv func(string) string) (*chat.Options, error) {
	c.s.APIKeySet = Changed(c.FS, "api-key")
	return c.s.Options(args, getenv)
}
