# One entry point for people and CI. `make demo` runs the whole chain on the bundled mock
# server; `make test` is what CI runs (.ci/run).
GO        ?= go
BIN       := bin
CMDS      := plan replay analyze mockllm
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME  ?= 10s
DEMO_DIR  ?= $(BIN)/demo
DEMO_PORT ?= 18431

.PHONY: all build test demo bench fuzz lint clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ $(addprefix ./cmd/,$(CMDS))

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# demo: mockllm on loopback, then plan -> replay -> analyze on a small streaming workload.
demo: build
	@bash scripts/demo.sh $(BIN) $(DEMO_DIR) $(DEMO_PORT)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# fuzz: a short run of every fuzz target (go test runs one target per invocation).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf $(BIN)
