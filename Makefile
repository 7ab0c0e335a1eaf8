# orientd — build, test, demo and benchmark entry points. Run `make help` for the list.

SWIFT       ?= swift
DEMO_TRACE  ?= Tests/Fixtures/corpus/public/mounted_rotated.csv
DEMO_MATRIX ?= 0, -1, 0; -1, 0, 0; 0, 0, -1
DEMO_SPEED  ?= 1
DEMO_SOCKET ?= /tmp/orientd-demo.sock

.PHONY: help deps build release test integration-test demo bench clean

help:
	@echo "make demo    install what is missing, build, replay a demo trace live (DEMO_SPEED=4 for faster)"
	@echo "make test    install what is missing, build, run every test (unit, corpus, CLI, umockdev integration)"
	@echo "make integration-test   only the umockdev tests of the real sensor path"
	@echo "make bench   release build; corpus score table and detector throughput -> docs/benchmarks.md"
	@echo "make build   debug build;  make release: release build;  make clean"

deps:
	@scripts/ensure-deps

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product orientd
	$(SWIFT) build -c release --product orientctl

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test
	scripts/run-integration-tests

integration-test: deps
	$(SWIFT) build --product orientd
	scripts/run-integration-tests

demo: release
	@echo "orientd demo: the daemon runs on the mock sensor replaying $(DEMO_TRACE) at $(DEMO_SPEED)x real time"
	@echo "(a board mounted rotated: --mount-matrix \"$(DEMO_MATRIX)\"); orientctl monitor prints every change."
	@echo "Lines: SEQ TOPIC FROM -> TO. The trace lasts about 33 s at 1x; Ctrl-C stops."
	@echo
	@rm -f $(DEMO_SOCKET)
	@.build/release/orientd serve --sensor "replay:$(DEMO_TRACE)?speed=$(DEMO_SPEED)" --mount-matrix "$(DEMO_MATRIX)" \
		--socket $(DEMO_SOCKET) --log-level warning & daemon=$$!; \
	trap 'kill $$daemon 2>/dev/null; wait $$daemon 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq 50); do [ -S $(DEMO_SOCKET) ] && break; sleep 0.1; done; \
	timeout $$(awk "BEGIN { print int(36 / $(DEMO_SPEED)) + 2 }") .build/release/orientctl monitor --socket $(DEMO_SOCKET) || true

bench: deps
	$(SWIFT) build -c release --product orientd-bench
	.build/release/orientd-bench --corpus Tests/Fixtures/corpus/public --markdown docs/benchmarks.md

clean:
	rm -rf .build
