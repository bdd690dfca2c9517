// Package eventmemo reads the content events of a stream without parsing their JSON: a
// Template learns an event's layout from one the endpoint parser handled, after proving
// that reading by the layout gives exactly what parsing would, and then reads the events
// of that layout by comparing bytes. analyze's request processor uses it on every event of
// the logs, so it is what keeps analysis at millions of events per second per core.
//
// It is a cache of package endpoint's parser, never a second judge. It imports endpoint and
// the standard library, never analyze.
package eventmemo
