package errline

import (
	"errors"
	"io"
	"net"
	"os"

	"github.com/llmbench/llmbench/redact"
)

// Net is a network error's text as a request's error says it: a net.OpError without its
// addresses (the URL is named by the caller, redacted), a cut response in words, anything
// else redacted. The workers' client and the preflight say a failure alike through it.
func Net(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		var se *os.SyscallError
		if errors.As(op.Err, &se) {
			return se.Err.Error()
		}
		return op.Err.Error()
	}
	if err == io.ErrUnexpectedEOF {
		return "connection closed before the response ended"
	}
	return redact.Text(err.Error())
}
