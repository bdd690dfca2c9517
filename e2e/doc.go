// Package e2e holds end-to-end tests: plan → replay → analyze against mockllm, for every endpoint type.
//
// The tests build the four commands once (TestMain), start mockllm servers on free loopback
// ports and drive the real binaries the way a user does, then read analyze's exports
// (profile_export_aiperf.json, profile_export.jsonl). Nothing here is imported by other
// packages; the package exists for its tests.
package e2e
