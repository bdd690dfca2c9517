package main

import (
	"fmt"
	"io"
	"os"

	"github.com/llmbench/llmbench/cmd/internal/cli"
)

// runCompile is `plan [flags] -o FILE`; the flags are cli.Plan's.
func runCompile(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	p := cli.NewPlan()
	ver := cli.AddVersion(p.FS)
	if err := p.FS.Parse(args); err != nil {
		return cli.Fail(stderr, "plan", 2, cli.ParseError(p.FS, err))
	}
	if *ver {
		cli.PrintVersion(stdout, "plan")
		return 0
	}
	if p.Help() {
		cli.Usage(stdout, "usage: plan [flags] -o FILE\n       plan inspect [--json] [--requests N] [--inputs-json OUT] FILE\n       plan tokenize ...",
			p.FS, cli.Width(getenv, int(os.Stdout.Fd())), p.HelpAll())
		return 0
	}
	if p.FS.NArg() > 0 {
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("unexpected argument %q (flags only; see plan --help)", p.FS.Arg(0)))
	}
	return p.Compile(getenv, stdout, stderr)
}
