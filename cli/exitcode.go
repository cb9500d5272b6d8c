package cli

import (
	"errors"
	"fmt"
)

// Exit codes shared by every command, so scripts can tell outcomes apart.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFindings: `report`, `merge` or `live` found something at or
	// above --fail-on.
	ExitFindings = 1
	// ExitUsage: bad flags or arguments, or input that could not be read at all.
	ExitUsage = 2
)

// exitError carries an exit code up to Execute together with the message to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports a usage or input error (exit code 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// exitCode maps an error returned by a command to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Errors from flag parsing and anything else unexpected are usage errors.
	return ExitUsage
}
