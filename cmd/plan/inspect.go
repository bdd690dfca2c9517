package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan"
)

// runInspect is `plan inspect [--json] [--requests N] [--skip-hash] [--inputs-json OUT] FILE`.
func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("plan inspect", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON object (hash, request_count, spec, requests, ...)")
	requests := fs.Int("requests", 0, "also show the first N records with their bodies (-1: all)")
	skipHash := fs.Bool("skip-hash", false, "do not verify the content hash (fast open)")
	inputsJSON := fs.String("inputs-json", "", "also write AIPerf's inputs.json view of the plan (payloads per session) to this file")
	help := fs.BoolP("help", "h", false, "print this help")
	if err := fs.Parse(args); err != nil {
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("inspect: %w", err))
	}
	if *help {
		fmt.Fprintf(stdout, "usage: plan inspect [--json] [--requests N] [--inputs-json OUT] FILE\n\n%s", fs.FlagUsages())
		return 0
	}
	if fs.NArg() != 1 {
		return cli.Fail(stderr, "plan", 2, errors.New("inspect: want exactly one plan FILE"))
	}
	if *requests < -1 {
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("inspect: --requests must be >= -1 (got %d)", *requests))
	}
	p, err := mmapds.Open(fs.Arg(0), mmapds.Options{SkipHash: *skipHash})
	if err != nil {
		return cli.Fail(stderr, "plan", 2, err) // a missing, foreign, truncated or corrupt file: bad input
	}
	defer p.Close()
	if *inputsJSON != "" {
		if err := plan.WriteInputsJSONFile(fs.Arg(0), *inputsJSON); err != nil {
			return cli.Fail(stderr, "plan", 1, err)
		}
	}
	s, err := plan.Summarize(p, *requests)
	if err != nil {
		return cli.Fail(stderr, "plan", 2, err)
	}
	if *asJSON {
		err = s.WriteJSON(stdout)
	} else {
		err = s.WriteText(stdout)
	}
	if err != nil {
		return cli.Fail(stderr, "plan", 1, err)
	}
	return 0
}
