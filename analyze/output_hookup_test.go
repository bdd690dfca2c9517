package analyze_test

import (
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/analyze/internal/analyzetest"
	"github.com/llmbench/llmbench/analyze/output"
)

// The writers of analyze/output and the shared test registry (analyzetest), for analyze's own
// tests (output_test.go says why).
func init() {
	analyze.WriteAIPerfJSON = output.WriteAIPerfJSON
	analyze.WriteAIPerfCSV = output.WriteAIPerfCSV
	analyze.WriteConsole = output.WriteConsole
	analyze.WriteConsoleColor = output.WriteConsoleColor
	analyze.WriteTimeslicesJSON = output.WriteTimeslicesJSON
	analyze.WriteTimeslicesCSV = output.WriteTimeslicesCSV
	analyze.ShardLines = output.ShardLines
	analyze.VerdictLine = output.VerdictLine
	analyze.UseCSVName(output.CSVName)
	analyze.SetTestRegistry(analyzetest.Registry)
	analyze.GeneratorClaimWithout = func(s *analyze.Summary) analyze.ClaimPart {
		return benchclaim.GeneratorClaim(s, nil, "", benchclaim.RunIdentity{})
	}
}
