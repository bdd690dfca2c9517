package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Containers limit a process's CPUs in two ways the scheduler affinity does not fully show:
// a CPU bandwidth quota (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), which
// a Kubernetes CPU limit becomes, and a cpuset (cpuset.cpus.effective, v1
// cpuset.effective_cpus), which the static CPU manager and Slurm's task/cgroup set. Workers
// follow both: at most as many as the quota allows whole CPUs, on CPUs of the cpuset.

// cgroupCPU is what the process's cgroups limit its CPUs to.
type cgroupCPU struct {
	// Quota is the CPU bandwidth limit in CPUs, the tightest along the cgroup's ancestry;
	// 0 when there is none. QuotaFile is the file it came from.
	Quota     float64
	QuotaFile string
	// Cpuset is the CPUs the cpuset controller allows; nil when none could be read.
	// CpusetFile is the file it came from.
	Cpuset     []int
	CpusetFile string
}

// mount is one cgroup filesystem mount of /proc/self/mountinfo.
type mount struct {
	root, point string // the cgroup path the mount shows, and where
	v2          bool
	controllers []string // v1: the mount's controllers
}

// readCgroupCPU reads the CPU limits of this process's cgroups under root ("/" but in
// tests): root/proc/self/cgroup, root/proc/self/mountinfo and the cgroup files they lead
// to. A layout it does not understand gives no limit, never an error that stops a run.
func readCgroupCPU(root string) cgroupCPU {
	var out cgroupCPU
	paths, err := readProcCgroup(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return out
	}
	mounts, err := readMountinfo(filepath.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return out
	}
	// dir finds the directory of this process's cgroup for controller ("" : v2).
	dir := func(controller string) (leaf, top string, v2 bool, ok bool) {
		for _, m := range mounts {
			if m.v2 || !slices.Contains(m.controllers, controller) {
				continue
			}
			if p, ok := paths[controller]; ok {
				if d, ok := cgroupDir(root, m, p); ok {
					return d, filepath.Join(root, m.point), false, true
				}
			}
		}
		for _, m := range mounts {
			if p, ok := paths[""]; ok && m.v2 {
				if d, ok := cgroupDir(root, m, p); ok {
					return d, filepath.Join(root, m.point), true, true
				}
			}
		}
		return "", "", false, false
	}
	if leaf, top, v2, ok := dir("cpu"); ok {
		for d := leaf; ; d = filepath.Dir(d) {
			q, file := readQuota(d, v2)
			if q > 0 && (out.Quota == 0 || q < out.Quota) {
				out.Quota, out.QuotaFile = q, strings.TrimPrefix(file, filepath.Clean(root))
			}
			if d == top || len(d) <= len(top) {
				break
			}
		}
	}
	if leaf, top, v2, ok := dir("cpuset"); ok {
		names := []string{"cpuset.effective_cpus", "cpuset.cpus"}
		if v2 {
			names = []string{"cpuset.cpus.effective"}
		}
	walk:
		for d := leaf; ; d = filepath.Dir(d) {
			for _, n := range names {
				b, err := os.ReadFile(filepath.Join(d, n))
				if err != nil {
					continue
				}
				s := strings.TrimSpace(string(b))
				if s == "" {
					continue // v1 cpuset.cpus of a cgroup that never set one
				}
				if cpus, err := ParseCPUList(s); err == nil {
					out.Cpuset, out.CpusetFile = cpus, strings.TrimPrefix(filepath.Join(d, n), filepath.Clean(root))
					break walk
				}
			}
			if d == top || len(d) <= len(top) {
				break
			}
		}
	}
	return out
}

// readProcCgroup parses /proc/self/cgroup: controller → cgroup path, "" for cgroup v2.
func readProcCgroup(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			out[""] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c != "" {
				out[c] = f[2]
			}
		}
	}
	return out, nil
}

// readMountinfo returns the cgroup and cgroup2 mounts of a mountinfo file.
func readMountinfo(path string) ([]mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := bytes.Cut(sc.Bytes(), []byte(" - "))
		if !ok {
			continue
		}
		pf, qf := strings.Fields(string(pre)), strings.Fields(string(post))
		if len(pf) < 5 || len(qf) < 1 {
			continue
		}
		m := mount{root: unescapeMount(pf[3]), point: unescapeMount(pf[4])}
		switch qf[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			if len(qf) >= 3 {
				m.controllers = strings.Split(qf[2], ",")
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupDir is the directory under root holding cgroup path p of mount m, when p lies
// within what the mount shows.
func cgroupDir(root string, m mount, p string) (string, bool) {
	rel, err := filepath.Rel(m.root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		// A cgroup namespace shows the process at "/" of a mount of its own cgroup; a path
		// outside the mount's root cannot be reached through it.
		if p == "/" {
			return filepath.Join(root, m.point), true
		}
		return "", false
	}
	return filepath.Join(root, m.point, rel), true
}

// readQuota reads the CPU quota of one cgroup directory in CPUs (0: none there).
func readQuota(dir string, v2 bool) (float64, string) {
	if v2 {
		file := filepath.Join(dir, "cpu.max")
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, ""
		}
		f := strings.Fields(string(b))
		if len(f) < 1 || f[0] == "max" {
			return 0, ""
		}
		period := 100000.0
		if len(f) >= 2 {
			if p, err := strconv.ParseFloat(f[1], 64); err == nil && p > 0 {
				period = p
			}
		}
		q, err := strconv.ParseFloat(f[0], 64)
		if err != nil || q <= 0 || math.IsInf(q, 0) {
			return 0, ""
		}
		return q / period, file
	}
	qf := filepath.Join(dir, "cpu.cfs_quota_us")
	qb, err1 := os.ReadFile(qf)
	pb, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, ""
	}
	q, err1 := strconv.ParseFloat(strings.TrimSpace(string(qb)), 64)
	p, err2 := strconv.ParseFloat(strings.TrimSpace(string(pb)), 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, "" // -1: no quota
	}
	return q / p, qf
}

// CPUPart is part Index of Count of a machine's CPUs, for several replays sharing one
// machine (Slurm tasks on one node that Slurm did not bind to CPUs of their own).
type CPUPart struct{ Index, Count int }

// narrowCPUs narrows cpus (those sched_getaffinity allows) to what the workers may use by
// default: the cgroup's cpuset, then part of them, then as many as the quota allows whole
// CPUs (at least one). why says what narrowed them, "" when nothing did.
func narrowCPUs(cpus []int, cg cgroupCPU, part CPUPart) (out []int, why string, err error) {
	var whys []string
	if cg.Cpuset != nil {
		var in []int
		for _, c := range cpus {
			if containsInt(cg.Cpuset, c) {
				in = append(in, c)
			}
		}
		if len(in) > 0 && len(in) < len(cpus) {
			whys = append(whys, fmt.Sprintf("the cgroup's cpuset %s (%s)", formatCPUs(cg.Cpuset), cg.CpusetFile))
			cpus = in
		}
	}
	if part.Count > 1 {
		if part.Index < 0 || part.Index >= part.Count {
			return nil, "", fmt.Errorf("CPU part %d of %d: no such part", part.Index, part.Count)
		}
		if len(cpus) < part.Count {
			return nil, "", fmt.Errorf("CPUs %s cannot be split over %d replays on this machine: each needs a CPU of its own", formatCPUs(cpus), part.Count)
		}
		lo, hi := part.Index*len(cpus)/part.Count, (part.Index+1)*len(cpus)/part.Count
		whys = append(whys, fmt.Sprintf("part %d of %d of CPUs %s", part.Index, part.Count, formatCPUs(cpus)))
		cpus = cpus[lo:hi]
	}
	if cg.Quota > 0 {
		if n := max(1, int(math.Floor(cg.Quota+1e-9))); n < len(cpus) {
			whys = append(whys, fmt.Sprintf("a CPU quota of %s CPUs (%s)", strconv.FormatFloat(cg.Quota, 'f', -1, 64), cg.QuotaFile))
			cpus = cpus[:n]
		}
	}
	return cpus, strings.Join(whys, ", "), nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// formatCPUs writes cpus as a Linux CPU list, runs of consecutive CPUs as ranges ("0-3,6").
func formatCPUs(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
