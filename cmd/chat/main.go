// Command chat is AIPerf's `aiperf chat`: it talks to an endpoint one message at a time and
// prints, after each reply, the turn's time to first token, output token throughput,
// inter-token latency and prompt-cache hits, computed by analyze's own code from the turn's
// raw record (the same definitions as every export):
//
//	chat --model M [--url URL]            read messages from stdin, one a line (Ctrl-D ends)
//	chat --model M --quick [MESSAGE...]   send one message and exit
//
// Each turn goes through the workers' HTTP client (probe.Single), so its timings are taken
// as a run takes them. The conversation so far is sent with every message unless
// --no-history. Replies stream to stdout, followed by the turn's figures; prompts and notices
// go to stderr, so stdout holds the conversation only. Exit status: 0 every turn answered, 1 a
// turn failed, 2 bad input, 130 interrupted.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmbench/llmbench/chat"
	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/redact"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, redact.NewWriter(os.Stdout), redact.NewWriter(os.Stderr), os.Getenv)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := cli.NewChat()
	bad := cli.BadInput(stderr, "chat")
	if code, ok := cli.Parse("chat", c.FS, argv[1:], stderr, func() { usage(stdout, c, getenv) }); !ok {
		return code
	}
	switch {
	case c.Version():
		cli.PrintVersion(stdout, "chat")
		return 0
	case c.Help():
		usage(stdout, c, getenv)
		return 0
	}
	o, err := c.Options(c.FS.Args(), getenv)
	if err != nil {
		return bad(err)
	}
	return chat.Run(ctx, o, stdin, stdout, stderr)
}

func usage(w io.Writer, c *cli.Chat, getenv func(string) string) {
	cli.Usage(w, "usage: chat --model M [--url URL] [flags]   talk to it: one message a line\n"+
		"       chat --model M --quick [MESSAGE...]   send one message and exit",
		c.FS, cli.Width(getenv, int(os.Stdout.Fd())), c.HelpAll())
}
