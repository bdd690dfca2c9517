// Command plan compiles a workload into a plan file, inspects plan files, and tokenizes text:
//
//	plan [flags] -o FILE              compile (AIPerf's flag names and defaults)
//	plan inspect [--json] [--requests N] [--inputs-json OUT] FILE
//	plan tokenize ...                 count or encode text under a tokenizer
//
// Bad flags or input print one line on stderr and exit 2; other failures exit 1.
package main

import (
	"io"
	"os"

	"github.com/llmbench/llmbench/redact"
)

// main runs plan with its stderr redacted (package redact); stdout carries what was asked
// for (a plan's inspection, tokens) unchanged.
func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, redact.NewWriter(os.Stderr)))
}

// run dispatches a command line and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "inspect":
			return runInspect(args[1:], stdout, stderr)
		case "tokenize":
			return runTokenize(args[1:], stdin, stdout, stderr)
		}
	}
	return runCompile(args, os.Getenv, stdout, stderr)
}
