// Package calibrate measures, from a pinned worker before its first send, what this machine
// costs any process at least (Machine: timer wake-up lag, a loopback round trip, a bare
// system call) and reads the kernel's clock discipline (Clock), both recorded in run.json
// so that analyze's verdict can tell a lag the client caused from the machine's own.
//
// It imports rawlog and golang.org/x/sys/unix, never replay or its transports.
package calibrate
