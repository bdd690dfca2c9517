package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// podmanRunFlags work where podman may not raise rlimits (no CAP_SYS_RESOURCE: its defaults,
// nofile 1048576, would fail) and cgroups are not usable.
var podmanRunFlags = []string{"run", "--rm", "--network", "host", "--cgroups", "disabled",
	"--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"}

// TestContainerImage runs the FROM-scratch image (make image) against mockllm on the host's
// loopback: replay from the image writes a run, analyze from the image reads it. Where podman
// cannot start containers (crun refuses a host whose cgroup v2 mount has controllers while
// v1 ones are mounted: "cgroups in hybrid mode not supported"), it runs the image's root
// filesystem (podman image mount) under chroot as the image's user, with a /proc of its own
// (unshare), instead, and says so: that
// still proves the image holds everything the binaries need. Skipped unless
// LLMBENCH_E2E_IMAGE names the image (make e2e-podman).
func TestContainerImage(t *testing.T) {
	image := os.Getenv("LLMBENCH_E2E_IMAGE")
	if image == "" {
		t.Skip("needs the container image: make e2e-podman")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman not installed")
	}
	srv := startMock(t, mockTiming...)
	dir := t.TempDir()
	run := func(entry string, args ...string) result {
		return command(t, podman, append(append(append([]string{}, podmanRunFlags...), "-v", dir+":/work", "--entrypoint", entry, image), args...)...)
	}
	if r := command(t, podman, append(append([]string{}, podmanRunFlags...), image, "--version")...); r.code != 0 {
		if !strings.Contains(r.stderr, "cgroups in hybrid mode") {
			t.Fatalf("podman run: exit %d: %s", r.code, r.stderr)
		}
		t.Logf("podman run is blocked here (%s); running the image's root filesystem under chroot instead", strings.TrimSpace(r.stderr))
		m := command(t, podman, "image", "mount", image)
		if m.code != 0 {
			t.Fatalf("podman image mount: %s", m.stderr)
		}
		root := filepath.Join(t.TempDir(), "rootfs")
		cp := command(t, "cp", "-a", strings.TrimSpace(m.stdout), root)
		command(t, podman, "image", "unmount", image)
		if cp.code != 0 {
			t.Fatalf("cp: %s", cp.stderr)
		}
		dir = filepath.Join(root, "work")
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(root, "proc"), 0o555); err != nil {
			t.Fatal(err)
		}
		// What a container runtime gives: its own /proc (replay finds its executable there to
		// start workers), in a mount namespace that ends with the command.
		run = func(entry string, args ...string) result {
			return command(t, "unshare", append([]string{"--mount", "--fork", "--pid", "--mount-proc=" + filepath.Join(root, "proc"),
				"chroot", "--userspec=65534:65534", root, entry}, args...)...)
		}
	}
	compile(t, dir, "--model", "mock", "--endpoint-type", "chat", "--streaming", "--isl", "16", "--osl", "4",
		"--extra-inputs", "ignore_eos:true", "--request-count", "12", "--concurrency", "3", "--random-seed", "2")
	// The image runs as nobody (65534).
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "test.plan"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run("/bin/replay", "--plan", "/work/test.plan", "--url", srv.URL, "--output-dir", "/work/run", "--no-pin", "--no-gpu-telemetry", "--ui-type", "none")
	if r.code != 0 {
		t.Fatalf("replay from the image: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run("/bin/analyze", "--quiet", "--plan", "/work/test.plan", "/work/run")
	if r.code != 0 {
		t.Fatalf("analyze from the image: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	s := readSummary(t, filepath.Join(dir, "run"))
	if n := s.must(t, "request_count").Avg; n != 12 {
		t.Errorf("request_count %v, want 12", n)
	}
	if got := srv.requestsTotal(t); got != 12+1 { // and the preflight's (on by default)
		t.Errorf("mockllm counted %d requests, want 12 and the preflight's 1", got)
	}
}
