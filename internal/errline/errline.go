// Package errline is the one form in which every command prints an error: one line,
// "name: message", the message's own "name: " prefix not repeated and its newlines folded
// into spaces. The commands (cmd/internal/cli.OneLine) and the workflows they run
// (profile, export, chat, deploy/kubernetes) print through it, so a line reads the same
// whoever wrote it.
package errline

import "strings"

// Format formats err as the single line "name: message", without a repeated prefix.
func Format(name string, err error) string {
	msg := strings.TrimPrefix(err.Error(), name+": ")
	return name + ": " + strings.ReplaceAll(msg, "\n", " ")
}
