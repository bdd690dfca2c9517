# One entry point for people and CI. `make demo` runs the whole chain on the bundled mock
# server; `make test` is what CI runs (.ci/run).
GO        ?= go
BIN       := bin
CMDS      := plan replay analyze mockllm profile
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME  ?= 10s
DEMO_DIR  ?= $(BIN)/demo
DEMO_PORT ?= 18431

.PHONY: all build test demo bench fuzz lint clean

all: build

# -buildvcs=auto stamps the commit into --version even where GOFLAGS turns stamping off.
build:
	@mkdir -p $(BIN)
	$(GO) build -buildvcs=auto -o $(BIN)/ $(addprefix ./cmd/,$(CMDS))

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# demo: mockllm on loopback, then plan -> replay -> analyze on a small streaming workload.
demo: build
	@bash scripts/demo.sh $(BIN) $(DEMO_DIR) $(DEMO_PORT)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

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

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf $(BIN)
