// Package config owns the config file formats that `profile --config FILE` reads and
// `--print-config` writes (docs/profile.md "Config file"): YAML keyed by flag names, and
// AIPerf's config v2 (schemaVersion "2.0", a benchmark: body), whose keys are mapped onto
// the same flags. Read and Parse turn a file into typed Settings, each naming the flag it
// sets, its values and the file's line; Write renders a command's effective configuration
// as a file that reads back to the same. The command (cmd/) maps Settings onto its flags;
// this package sees the flags only through the Flags interface, so it never imports pflag.
//
// It imports yaml and redact (a printed config holds no credential) and nothing of the
// workflows: plan, replay, analyze and profile never import it either.
package config
