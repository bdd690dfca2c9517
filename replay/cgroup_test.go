package replay

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The CPU limits of fake cgroup trees (testdata/cgroup/<layout>: proc/self/{cgroup,mountinfo}
// and the cgroup files they lead to), for cgroup v1, v2 and both at once.
func TestReadCgroupCPU(t *testing.T) {
	for _, tc := range []struct {
		layout     string
		quota      float64
		quotaFile  string
		cpuset     []int
		cpusetFile string
	}{
		{"v2-container", 2.5, "/sys/fs/cgroup/cpu.max", []int{2, 3, 4, 5}, "/sys/fs/cgroup/cpuset.cpus.effective"},
		{"v2-nested", 4, "/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/cpu.max", []int{4, 5, 6, 7, 8, 9, 10, 11},
			"/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/cri-abc.scope/cpuset.cpus.effective"},
		{"v1-docker", 1.5, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", []int{1, 3}, "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"},
		{"v1-noquota", 0, "", []int{6, 7}, "/sys/fs/cgroup/cpuset/slurm/uid_0/job_7/step_0/cpuset.cpus"},
		{"hybrid", 0.5, "/sys/fs/cgroup/cpu/job1/cpu.cfs_quota_us", []int{0, 1}, "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"},
		{"none", 0, "", nil, ""},
		{"escaped", 3, "/sys/fs/cgroup v2/cpu.max", nil, ""},
		{"does-not-exist", 0, "", nil, ""},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			got := readCgroupCPU(filepath.Join("testdata", "cgroup", tc.layout))
			if got.Quota != tc.quota || got.QuotaFile != tc.quotaFile {
				t.Errorf("quota %v from %q, want %v from %q", got.Quota, got.QuotaFile, tc.quota, tc.quotaFile)
			}
			if !slices.Equal(got.Cpuset, tc.cpuset) || got.CpusetFile != tc.cpusetFile {
				t.Errorf("cpuset %v from %q, want %v from %q", got.Cpuset, got.CpusetFile, tc.cpuset, tc.cpusetFile)
			}
		})
	}
}

// The workers' CPUs follow the cpuset, this replay's part of the machine and the quota.
func TestNarrowCPUs(t *testing.T) {
	node := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, tc := range []struct {
		name string
		cg   cgroupCPU
		part CPUPart
		want []int
		why  string // substring of the reason; "-": nothing narrowed them; "": not checked
		err  string
	}{
		{name: "no limits", want: node, why: "-"},
		{name: "quota 2.5", cg: cgroupCPU{Quota: 2.5, QuotaFile: "/sys/fs/cgroup/cpu.max"}, want: []int{0, 1}, why: "a CPU quota of 2.5 CPUs (/sys/fs/cgroup/cpu.max)"},
		{name: "quota below one CPU", cg: cgroupCPU{Quota: 0.5}, want: []int{0}, why: "quota of 0.5"},
		{name: "quota above the CPUs", cg: cgroupCPU{Quota: 16}, want: node, why: "-"},
		{name: "cpuset", cg: cgroupCPU{Cpuset: []int{2, 3, 9}, CpusetFile: "f"}, want: []int{2, 3}, why: "the cgroup's cpuset 2-3,9 (f)"},
		{name: "cpuset and quota", cg: cgroupCPU{Cpuset: []int{4, 5, 6, 7}, Quota: 3}, want: []int{4, 5, 6}, why: "quota of 3"},
		{name: "cpuset outside the affinity", cg: cgroupCPU{Cpuset: []int{12, 13}}, want: node, why: "-"},
		{name: "part 0 of 2", part: CPUPart{0, 2}, want: []int{0, 1, 2, 3}, why: "part 0 of 2 of CPUs 0-7"},
		{name: "part 1 of 2", part: CPUPart{1, 2}, want: []int{4, 5, 6, 7}},
		{name: "part 2 of 3", part: CPUPart{2, 3}, want: []int{5, 6, 7}},
		{name: "part of a cpuset, then the quota", cg: cgroupCPU{Cpuset: []int{0, 1, 2, 3}, Quota: 1}, part: CPUPart{1, 2}, want: []int{2}},
		{name: "more parts than CPUs", cg: cgroupCPU{Cpuset: []int{0}}, part: CPUPart{0, 2}, err: "cannot be split over 2 replays"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why, err := narrowCPUs(node, tc.cg, tc.part)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("CPUs %v (%v), want %v", got, err, tc.want)
			}
			if (tc.why == "-" && why != "") || (tc.why != "-" && !strings.Contains(why, tc.why)) {
				t.Errorf("why %q, want %q", why, tc.why)
			}
		})
	}
	// Parts of one machine never share a CPU, and together cover it.
	for n := 1; n <= len(node); n++ {
		seen := map[int]int{}
		for i := range n {
			got, _, err := narrowCPUs(node, cgroupCPU{}, CPUPart{i, n})
			if err != nil || len(got) == 0 {
				t.Fatalf("part %d of %d: %v %v", i, n, got, err)
			}
			for _, c := range got {
				seen[c]++
			}
		}
		for _, c := range node {
			if seen[c] != 1 {
				t.Fatalf("%d parts: CPU %d in %d parts", n, c, seen[c])
			}
		}
	}
}

// The cgroup files are the kernel's, but a container runtime may mount anything there:
// no content makes the reader panic or report a quota that is not positive.
func FuzzReadCgroupCPU(f *testing.F) {
	f.Add([]byte("0::/\n"), []byte("32 1 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup rw\n"), []byte("250000 100000\n"), []byte("0-3,7\n"))
	f.Add([]byte("4:cpu,cpuacct:/docker/x\n3:cpuset:/docker/x\n"), []byte("25 1 0:22 /docker/x /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"), []byte("-1"), []byte(""))
	f.Fuzz(func(t *testing.T, procCgroup, mountinfo, cpuMax, cpuset []byte) {
		root := t.TempDir()
		write := func(rel string, b []byte) {
			p := filepath.Join(root, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, b, 0o644)
		}
		write("proc/self/cgroup", procCgroup)
		write("proc/self/mountinfo", mountinfo)
		for _, d := range []string{"sys/fs/cgroup", "sys/fs/cgroup/cpu", "sys/fs/cgroup/cpuset", "sys/fs/cgroup/docker/x"} {
			write(d+"/cpu.max", cpuMax)
			write(d+"/cpu.cfs_quota_us", cpuMax)
			write(d+"/cpu.cfs_period_us", []byte("100000"))
			write(d+"/cpuset.cpus.effective", cpuset)
			write(d+"/cpuset.cpus", cpuset)
		}
		cg := readCgroupCPU(root)
		if cg.Quota < 0 || (cg.Quota > 0 && cg.QuotaFile == "") {
			t.Fatalf("quota %v from %q", cg.Quota, cg.QuotaFile)
		}
		if _, _, err := narrowCPUs([]int{0, 1, 2, 3}, cg, CPUPart{}); err != nil {
			t.Fatal(err)
		}
	})
}
