# orientd — build, test, demo and benchmark entry points. Run `make help` for the list.

SWIFT       ?= swift
DEMO_TRACE  ?= Tests/Fixtures/corpus/public/mounted_rotated.csv
DEMO_MATRIX ?= 0, -1, 0; -1, 0, 0; 0, 0, -1
DEMO_SPEED  ?= 1

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

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test
	scripts/run-integration-tests

integration-test: deps
	$(SWIFT) build --product orientd
	scripts/run-integration-tests

demo: release
	@echo "orientd demo: replaying $(DEMO_TRACE) at $(DEMO_SPEED)x real time through the detection pipeline."
	@echo "The board in this trace is mounted rotated; --mount-matrix \"$(DEMO_MATRIX)\" maps it to the display."
	@echo "Each line is an orientation change: {\"t\": trace seconds, \"orientation\": DeviceOrientation}."
	@echo
	.build/release/orientd replay "$(DEMO_TRACE)" --mount-matrix "$(DEMO_MATRIX)" --speed $(DEMO_SPEED)

bench: deps
	$(SWIFT) build -c release --product orientd-bench
	.build/release/orientd-bench --corpus Tests/Fixtures/corpus/public --markdown docs/benchmarks.md

clean:
	rm -rf .build
