//go:build !unix

package replay

import "syscall"

func workerSysProcAttr() *syscall.SysProcAttr { return nil }
