package noise

import (
	"os"
	"strconv"
	"strings"
)

// Pressure is the share of the last 10 seconds in which some runnable task waited for a
// CPU, and for I/O, in percent, as the kernel's pressure stall information keeps it
// (/proc/pressure, Linux 4.20 and later). A sampler on one CPU cannot see a stall that the
// rest of the machine causes (a process kept off its CPU by a busy neighbour's migration,
// a write held back by the disk); this can. OK is false where the kernel keeps none.
type Pressure struct {
	CPU, IO float64
	OK      bool
}

// ReadPressure reads the machine's pressure now.
func ReadPressure() Pressure {
	cpu, okC := someAvg10("/proc/pressure/cpu")
	io, okI := someAvg10("/proc/pressure/io")
	return Pressure{CPU: cpu, IO: io, OK: okC && okI}
}

// Calm reports whether neither pressure passes limit percent; a machine without pressure
// information counts as calm, so timing checks stay on there.
func (p Pressure) Calm(limit float64) bool {
	return !p.OK || (p.CPU <= limit && p.IO <= limit)
}

// someAvg10 is the avg10 figure of the "some" line of a pressure file.
func someAvg10(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "avg10="); ok {
				x, err := strconv.ParseFloat(v, 64)
				return x, err == nil
			}
		}
	}
	return 0, false
}
