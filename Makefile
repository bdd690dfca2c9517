# One entry point for people and CI. `make demo` runs the whole chain on the bundled mock
# server; `make test` is what CI runs (.ci/run).
GO        ?= go
BIN       := bin
CMDS      := plan replay analyze mockllm profile chat
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME  ?= 10s
DEMO_DIR  ?= $(BIN)/demo
DEMO_PORT ?= 18431

.PHONY: all build test test-net-client demo bench bench-floor fuzz lint clean image e2e-slurm e2e-podman

all: build

# go-nvml (replay/telemetry) declares NVML's deprecated functions and its cgo wrappers call
# them: gcc warns 29 times on every fresh compile of that package. The warning is about NVIDIA's
# header, not this build, so it is silenced here: -Wno-deprecated-declarations only hides
# deprecation notices (no #cgo directive of ours can reach a dependency's compile, and no cgo
# code of this module calls a deprecated C function). Kept after the caller's CGO_CFLAGS.
override CGO_CFLAGS := $(if $(CGO_CFLAGS),$(CGO_CFLAGS),-O2 -g) -Wno-deprecated-declarations
export CGO_CFLAGS

# -buildvcs=auto stamps the commit into --version even where GOFLAGS turns stamping off.
build:
	@mkdir -p $(BIN)
	$(GO) build -buildvcs=auto -o $(BIN)/ $(addprefix ./cmd/,$(CMDS))

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

# demo: mockllm on loopback, then plan -> replay -> analyze on a small streaming workload.
demo: build
	@bash scripts/demo.sh $(BIN) $(DEMO_DIR) $(DEMO_PORT)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# bench-floor: the client against the machine's floor (replay/testdata/floor.c, built with
# cc), replay with its default flags (the server scrape on), against mockllm in vLLM's chunk
# layout serving vLLM's /metrics page (TTFT 100 ms, ITL 10 ms), or any server: URL=http://IP:PORT
# (MODEL= the model its requests name). It prints the scrape's CPU per scrape; CPU per request
# (worker, coordinator, sum) as ratios to the floor at concurrency 64, 256 and 1,000 (system
# calls and context switches per request beside them where perf can count them); requests per
# CPU-second with one-token, zero-delay responses; and per rate (200, 2,000, 5,000 req/s) and
# arrival (Poisson, constant) the send error p50/p99 and the realised send gaps' CV beside the
# plan's (beside the noise on the worker's CPU meanwhile, internal/noise). Medians of ROUNDS
# interleaved rounds; docs/performance.md reads the figures. About 3 minutes a round on 2 CPUs;
# QUICK=1 keeps one setting of each (concurrency 64, 2,000 req/s Poisson): a minute or two.
ROUNDS ?= 1
URL ?=
MODEL ?= Qwen/Qwen3-0.6B
QUICK ?=
bench-floor:
	$(GO) test -run '^$$' -bench 'BenchmarkFloorVsClients|BenchmarkClientsScheduleLag' -benchtime 1x -timeout 60m ./replay/ \
		-floor.rounds $(ROUNDS) -floor.url '$(URL)' -floor.model '$(MODEL)' $(if $(QUICK),-floor.quick)

# test-net-client: the replay and e2e suites with the net client as the default (--client net),
# as `make test` runs them with the event loop: both clients must pass every test.
test-net-client:
	GOFLAGS='-ldflags=-X=github.com/llmbench/llmbench/replay.DefaultClient=net' $(GO) test -count=1 ./replay/ ./e2e/

# fuzz: a short run of every fuzz target (go test runs one target per invocation). The targets
# are found in the test files go itself compiles for each package (internal and external
# tests, build constraints applied), whatever the files are called.
fuzz:
	@set -e; n=0; \
	for line in $$($(GO) list -f '{{.ImportPath}}={{range .TestGoFiles}}{{$$.Dir}}/{{.}},{{end}}{{range .XTestGoFiles}}{{$$.Dir}}/{{.}},{{end}}' ./...); do \
	  pkg=$${line%%=*}; files=$$(echo "$${line#*=}" | tr ',' ' '); \
	  [ -n "$$files" ] || continue; \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$files); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; n=$$((n+1)); \
	  done; \
	done; \
	echo "fuzz: $$n targets passed"; [ $$n -gt 0 ]

# image: the FROM-scratch container image (deploy/container/Containerfile) of static binaries.
IMAGE ?= llmbench:devel
image:
	@rm -rf $(BIN)/image && mkdir -p $(BIN)/image/bin $(BIN)/image/etc/ssl/certs
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -o $(BIN)/image/bin/ ./cmd/replay ./cmd/analyze ./cmd/plan ./cmd/mockllm
	cp /etc/ssl/certs/ca-certificates.crt $(BIN)/image/etc/ssl/certs/
	podman build -f deploy/container/Containerfile -t $(IMAGE) $(BIN)/image

# e2e-slurm: a one-machine Slurm cluster (deploy/slurm/local-cluster.sh, as root), then the
# sbatch script replaying two shards on one node against mockllm (e2e TestSlurm); whatever
# happens, the cluster is stopped (its daemons gone) and its temporary folder removed.
e2e-slurm:
	@d=$$(mktemp -d); trap 'bash deploy/slurm/local-cluster.sh stop '"$$d"'; rm -rf '"$$d" EXIT; \
	eval "$$(bash deploy/slurm/local-cluster.sh start $$d)" || exit 1; \
	LLMBENCH_E2E_SLURM=1 $(GO) test -count=1 -run '^TestSlurm$$' -v ./e2e/

# e2e-podman: the image, run with podman against mockllm (e2e TestContainerImage).
e2e-podman: image
	LLMBENCH_E2E_IMAGE=$(IMAGE) $(GO) test -count=1 -run '^TestContainerImage$$' -v ./e2e/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf $(BIN)
