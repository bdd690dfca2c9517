package analyze

import "io"

// analyze's tests check the exports of the runs they synthesise, and those exports are
// written by analyze/output, which imports analyze: a test in this package cannot import it.
// The external test package (output_hookup_test.go) hands its writers in before any test
// runs, under the names these tests have always called them by.
var (
	WriteAIPerfJSON     func(io.Writer, *Summary) error
	WriteAIPerfCSV      func(io.Writer, *Summary) error
	WriteConsole        func(io.Writer, *Summary) error
	WriteConsoleColor   func(io.Writer, *Summary, bool) error
	WriteTimeslicesJSON func(io.Writer, *Summary) error
	WriteTimeslicesCSV  func(io.Writer, *Summary) error
	ShardLines          func(*Summary) []string
	VerdictLine         func(*Summary) string

	csvName func(header, unit string) string
)

// GeneratorClaimWithout is analyze/benchclaim's generator part of the claim of s without a
// generator validation, handed in the same way (benchclaim imports analyze).
var GeneratorClaimWithout func(s *Summary) ClaimPart

// UseCSVName sets the CSV's metric names (analyze/output.CSVName) for the tests here.
func UseCSVName(name func(header, unit string) string) { csvName = name }
