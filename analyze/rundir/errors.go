package rundir

import (
	"errors"
	"fmt"
)

// ErrInput is wrapped by errors about the input (missing or inconsistent run directories,
// plan or logs), as opposed to failures writing results. analyze.ErrInput is this error.
var ErrInput = errors.New("bad input")

// Errorf is an input error with the message format and args give; its text starts with
// "analyze: ", the command that reads the input.
func Errorf(format string, args ...any) error {
	return fmt.Errorf("analyze: %w", &inputError{msg: fmt.Sprintf(format, args...)})
}

type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Is(t error) bool {
	return t == ErrInput
}

// Wrap marks err as an input error, keeping its text.
func Wrap(err error) error {
	if err == nil || errors.Is(err, ErrInput) {
		return err
	}
	return fmt.Errorf("analyze: %w", &wrappedInput{err})
}

type wrappedInput struct{ err error }

func (e *wrappedInput) Error() string   { return e.err.Error() }
func (e *wrappedInput) Unwrap() error   { return e.err }
func (e *wrappedInput) Is(t error) bool { return t == ErrInput }
