# orientd — build, test, demo and benchmark entry points. Run `make help` for the list.

SWIFT       ?= swift
DEMO_TRACE  ?= Tests/Fixtures/corpus/public/mounted_rotated.csv
DEMO_MATRIX ?= 0, -1, 0; -1, 0, 0; 0, 0, -1
DEMO_SPEED  ?= 1
DEMO_SOCKET ?= /tmp/orientd-demo.sock

PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
UNITDIR     ?= $(PREFIX)/lib/systemd/system
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
DOCDIR      ?= $(PREFIX)/share/doc/orientd
SYSCONFDIR  ?= /etc
# The bus reads policies from /etc/dbus-1/system.d and /usr/share/dbus-1/system.d only, polkit its
# actions from /usr/share/polkit-1/actions only: a /usr/local install puts them where they are read.
DBUSPOLICYDIR ?= $(SYSCONFDIR)/dbus-1/system.d
POLKITACTIONSDIR ?= /usr/share/polkit-1/actions
ORIENTD_BIN ?= .build/release/orientd
ORIENTCTL_BIN ?= .build/release/orientctl
FUZZ_SECONDS ?= 20
# make incumbent-suite REPEAT=20, make integration-test REPEAT=10: that many runs in a row (flaky tests show).
REPEAT      ?= 1
# libFuzzer's driver without its main (orientd-fuzz has its own entry point), from the Swift toolchain.
FUZZER_LIB  ?= $(firstword $(wildcard $(dir $(shell command -v swiftc))../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-$(shell uname -m).a))

.PHONY: help deps test-deps build release release-static package-binaries package-files generated-files test-arm64 install-package-files deb source source-test package-test package-trixie-test package-install-test check format test integration-test incumbent-suite fuzz soak demo bench clean install install-files uninstall

help:
	@echo "make demo    install what is missing, build, replay a demo trace live (DEMO_SPEED=4 for faster)"
	@echo "make check   lint the Swift sources (.swift-format), build and run the Swift unit tests only: the fast inner loop"
	@echo "make format  format the Swift sources as .swift-format says"
	@echo "make test    install what is missing, build, run every test (unit, corpus, hinge corpus, CLI, umockdev integration, reliability, 20 s of fuzzing, the package, the package on a real kernel)"
	@echo "make integration-test [REPEAT=10]   only the umockdev tests of the real sensor path, REPEAT times in a row"
	@echo "make incumbent-suite [REPEAT=20]   iio-sensor-proxy 3.9's own integration suite against orientd (fetched from Debian sid the first time), REPEAT times in a row"
	@echo "make fuzz [FUZZ_SECONDS=20]   libFuzzer on the request decoder (AddressSanitizer), bounded time"
	@echo "make soak    the long reliability run: ASan and TSan test suites, 300 s fuzzing, 1M abuse lines -> docs/reliability.md"
	@echo "make bench   release build; corpus score table and detector throughput -> docs/benchmarks.md"
	@echo "make deb     self-contained release build (Swift runtime linked in) -> dist/orientd_VERSION_ARCH.deb, checked by lintian"
	@echo "make source  Debian source package (Swift packages vendored) -> dist/orientd_VERSION.dsc, checked by lintian"
	@echo "make source-test   builds the source package offline with Debian sid's swiftlang, twice (byte-identical), then autopkgtest"
	@echo "make deb ARCH=arm64   the same for Debian 13 arm64, cross-compiled here (scripts/cross/cross-deb; the first run sets up its roots)"
	@echo "make test-arm64       installs the arm64 package in a Debian 13 arm64 root under qemu, runs it there, compares it with amd64's"
	@echo "make package-test   builds the package, unpacks it into a throwaway root, verifies the units, runs it with the Swift toolchain hidden"
	@echo "make package-trixie-test   installs the package in a Debian 13 root with apt and runs the same checks there"
	@echo "make package-install-test   apt installs, removes and purges the package ON THIS MACHINE (throwaway machines only)"
	@echo "make vm-test [CHECK=name]   the package on a real kernel: Debian 12's kernel in qemu, apt install, the checks of Tests/vm/checks (or one)"
	@echo "make vm-shell   the same VM with the package installed, a root shell on its serial console (quit: Ctrl-a x)"
	@echo "make install [PREFIX=/usr/local] [DESTDIR=...]   release build, then binaries, units, udev rule, config"
	@echo "make uninstall [PREFIX=...] [DESTDIR=...]         removes them (not /etc/orientd/orientd.toml)"
	@echo "make build   debug build;  make release: release build;  make clean"

# What building needs (make build, release, install, the package build); test tools only for the
# targets that test (test-deps): a device that builds orientd gets no test tool and no iio-sensor-proxy.
deps:
	@scripts/ensure-deps --build

test-deps:
	@scripts/ensure-deps --test

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product orientd
	$(SWIFT) build -c release --product orientctl

# The fast inner loop: the Swift tests alone (pure tables, corpus replay, the hub's state machine,
# the CLI), without the umockdev integration suite or fuzzing.
check:
	@scripts/ensure-deps --build
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift
	scripts/test/check-line-length
	scripts/test/check-names
	$(SWIFT) build --build-tests
	$(SWIFT) test

# Formats the Swift sources as .swift-format says (what make check's lint holds them to).
format:
	$(SWIFT) format --in-place --recursive --parallel Sources Tests Package.swift

# Every phase prints a start line and its result and duration, and the run ends with a table of
# them (scripts/test/run-phases); a failing phase names the command that runs it alone. The phases
# call make by name, not $(MAKE): make -n test (scripts/test/test-build-deps) must only print them.
# Three phases pair work that waits (apt, debootstrap, the umockdev suite) with a compiler
# (scripts/test/side-by-side). deps installs what building needs; prepare runs the debug build while
# apt installs the test and packaging tools (ensure-deps fetches the package lists once) and the
# Debian 13 root is made (the first time on a machine) for build-deps and package to copy;
# integration+binaries runs the umockdev suite beside the package's release build (which the package
# phase's dpkg-buildpackage then finds done); package+fuzz builds and tries the package (dpkg, xz,
# lintian, apt in a Debian 13 root: one core's work) beside the fuzz build and run and build-deps;
# vm boots that package on Debian 12's own kernel in qemu (make vm-test), on the root prepare made
# after the Debian 13 root (scripts/vm/vm-root, once per machine, beside the debug build).
test:
	@scripts/test/run-phases --title "make test" \
		deps 'scripts/ensure-deps --build' \
		prepare 'scripts/test/side-by-side --logs .build/prepare build "swift build --build-tests" \
			tools "scripts/ensure-deps --test --package && scripts/cross/debian-root $$(dpkg --print-architecture) binutils \
				&& scripts/vm/vm-root"' \
		check 'make --no-print-directory check' \
		fuzz-seeds '.build/debug/orientd-fuzz Tests/Fixtures/fuzz-request' \
		hinge-corpus 'scripts/test/test-hinge-corpus' \
		integration+binaries 'scripts/test/side-by-side integration scripts/test/run-integration-tests package-binaries "make package-binaries"' \
		private-checkout 'scripts/test/test-private-checkout' \
		package+fuzz 'scripts/test/side-by-side package "make --no-print-directory package-test package-trixie-test" \
			fuzz "make --no-print-directory fuzz" build-deps scripts/test/test-build-deps' \
		vm 'scripts/vm/vm-test'

# The long reliability run (docs/reliability.md): the Swift tests under AddressSanitizer and
# ThreadSanitizer, the integration tests against a daemon built with each, five minutes of fuzzing,
# and the reliability suite at ten times its size; its figures are written into docs/reliability.md.
#
# Against the sanitized daemons every report goes to a file of its own (log_path), and any file
# fails the step. ASan: umockdev's preload library precedes the ASan runtime in the library list
# (verify_asan_link_order=0), and leak checking at exit is off there: it reports the Swift
# runtime's weak-reference side tables and NIO objects still alive at exit; leaks are checked by
# the Swift suite under LeakSanitizer and by the load test's RSS bound, which in turn does not apply
# to a sanitized daemon (ORIENTD_SANITIZER tells the test so).
SANITIZED_DAEMON_STEP = rm -rf .build/soak/$(1)-daemon && mkdir -p .build/soak/$(1)-daemon && \
	{ $(2) ORIENTD_SANITIZER=$(1) ORIENTD=.build/$(1)/debug/orientd scripts/test/run-integration-tests > .build/soak/daemon-$(1).log 2>&1 \
	  || { tail -40 .build/soak/daemon-$(1).log; exit 1; }; } && \
	echo "sanitizer-reports: $$(ls .build/soak/$(1)-daemon | wc -l)" >> .build/soak/daemon-$(1).log && \
	{ test -z "$$(ls .build/soak/$(1)-daemon)" || { cat .build/soak/$(1)-daemon/*; exit 1; }; }

soak: test-deps
	mkdir -p .build/soak
	bash -o pipefail -c 'LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Fixtures/lsan.supp $(SWIFT) test --sanitize=address --build-path .build/asan 2>&1 | tee .build/soak/asan.log'
	bash -o pipefail -c '$(SWIFT) test --sanitize=thread --build-path .build/tsan 2>&1 | tee .build/soak/tsan.log'
	$(SWIFT) build --sanitize=address --build-path .build/asan --product orientd
	$(SWIFT) build --sanitize=address --build-path .build/asan --product orientctl
	$(call SANITIZED_DAEMON_STEP,asan,ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:log_path=$(CURDIR)/.build/soak/asan-daemon/report)
	$(SWIFT) build --sanitize=thread --build-path .build/tsan --product orientd
	$(SWIFT) build --sanitize=thread --build-path .build/tsan --product orientctl
	$(call SANITIZED_DAEMON_STEP,tsan,TSAN_OPTIONS=log_path=$(CURDIR)/.build/soak/tsan-daemon/report)
	bash -o pipefail -c '$(MAKE) fuzz FUZZ_SECONDS=300 2>&1 | tee .build/soak/fuzz.log'
	$(SWIFT) build
	ORIENTD_ABUSE_MESSAGES=1000000 ORIENTD_HOTPLUG_CYCLES=1000 scripts/test/run-integration-tests -k test_reliability \
		> .build/soak/reliability.log 2>&1 || { cat .build/soak/reliability.log; exit 1; }
	grep "reliability: " .build/soak/reliability.log
	scripts/test/reliability-report --command "make soak" .build/soak/asan.log .build/soak/tsan.log .build/soak/daemon-asan.log \
		.build/soak/daemon-tsan.log .build/soak/fuzz.log .build/soak/reliability.log

# The request decoder under libFuzzer and AddressSanitizer for FUZZ_SECONDS, starting from the seed
# inputs in Tests/Fixtures/fuzz-request (new inputs it finds go to .build/fuzz/corpus). A crash
# leaves its input in .build/fuzz/ and fails the target; `orientd-fuzz FILE` replays it.
fuzz: deps
	@test -n "$(FUZZER_LIB)" || { echo "make fuzz: libclang_rt.fuzzer_no_main-$(shell uname -m).a not found next to swiftc" >&2; exit 69; }
	$(SWIFT) build -c release --product orientd-fuzz --build-path .build/fuzz -Xswiftc -DFUZZING \
		-Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
		-Xlinker $(FUZZER_LIB) -Xlinker -lstdc++
	mkdir -p .build/fuzz/corpus
	SWIFT_BACKTRACE=enable=no timeout -s KILL $$(( $(FUZZ_SECONDS) + 60 )) .build/fuzz/release/orientd-fuzz \
		-max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=5 -print_final_stats=1 -artifact_prefix=.build/fuzz/ \
		.build/fuzz/corpus Tests/Fixtures/fuzz-request < /dev/null

integration-test: test-deps
	$(SWIFT) build
	scripts/test/run-integration-tests --repeat $(REPEAT)

# iio-sensor-proxy 3.9's own integration suite against orientd (docs/testing.md). Not in make test: the
# suite comes from Debian sid, fetched once into /var/cache/orientd-incumbent-suite, outside the repository.
incumbent-suite:
	@scripts/ensure-deps --build
	$(SWIFT) build --product orientd
	scripts/test/run-incumbent-suite --repeat $(REPEAT)

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

bench: test-deps release-static
	scripts/ensure-deps --bench
	$(SWIFT) build -c release --product orientd-bench
	$(SWIFT) build -c release --product orientd
	.build/release/orientd-bench --corpus Tests/Fixtures/corpus/public --gyroscope-corpus Tests/Fixtures/corpus/public-gyro \
		--markdown docs/benchmarks.md
	ORIENTD=$(CURDIR)/.build/release/orientd umockdev-wrapper /usr/bin/python3 -m bench

# The self-contained build: the Swift runtime, Foundation and the packages linked statically, so the
# binaries need only the distribution's libraries (libiio, libudev, libc, libstdc++). Its own build
# folder, so the dynamic debug and release builds stay as they are.
STATIC_BUILD ?= .build-static
VERSION     := $(shell sed -n 's/^public let orientdPackageVersion = "\(.*\)"/\1/p' Sources/OrientationProtocol/PackageVersion.swift)
HOST_ARCH   := $(shell dpkg --print-architecture 2>/dev/null || uname -m)
ARCH        := $(HOST_ARCH)
PACKAGE_OUT ?= $(STATIC_BUILD)/package

# Full RELRO (-z relro -z now): what Debian's hardening flags would give, which swift build does not
# read from LDFLAGS; the relocated data is made read-only once the loader is done with it.
STATIC_LINK ?= -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
# REPRODUCIBLE=1 (debian/rules): the same source gives the same binaries whatever folder it is built
# in. The folder is mapped to /usr/src/orientd in #file strings, debug information and the C targets'
# objects; without incremental LLVM code generation no object hashes its own absolute path
# (.swift_modhash); without clang module breadcrumbs the module cache's path stays out of the DWARF.
REPRODUCIBLE_FLAGS = -Xswiftc -file-prefix-map -Xswiftc $(CURDIR)=/usr/src/orientd \
	-Xcc -ffile-prefix-map=$(CURDIR)=/usr/src/orientd \
	-Xswiftc -Xfrontend -Xswiftc -disable-incremental-llvm-codegen \
	-Xswiftc -Xfrontend -Xswiftc -no-clang-module-breadcrumbs
STATIC_FLAGS = -c release --static-swift-stdlib $(STATIC_LINK) $(if $(REPRODUCIBLE),$(REPRODUCIBLE_FLAGS)) \
	--scratch-path $(STATIC_BUILD)
# What release-static runs first: the deps target, which installs what is missing; debian/rules
# empties it (a package build has its Build-Depends and must not install anything).
BUILD_DEPS ?= deps
ifeq ($(PREBUILT),)
release-static: $(BUILD_DEPS)
	$(SWIFT) build $(STATIC_FLAGS) --product orientd
	$(SWIFT) build $(STATIC_FLAGS) --product orientctl

# Man pages and shell completions, written by the binaries themselves: orientd(8) and orientctl(1)
# by swift-argument-parser's generate-manual from the commands' own help, orientd.toml(5) from the
# settings table, completions by argument-parser.
package-files: release-static
	$(MAKE) generated-files PACKAGE_BIN=$(STATIC_BUILD)/release

else
# PREBUILT=DIR: package binaries (DIR/orientd, DIR/orientctl) and generated files (DIR/package)
# made elsewhere, as scripts/cross/cross-deb makes them for another architecture.
release-static:
	mkdir -p $(STATIC_BUILD)/release && cp $(PREBUILT)/orientd $(PREBUILT)/orientctl $(STATIC_BUILD)/release/

package-files: release-static
	rm -rf $(PACKAGE_OUT) && cp -r $(PREBUILT)/package $(PACKAGE_OUT)

endif
# The package's binaries as debian/rules builds them (its BUILD: no deps step, REPRODUCIBLE=1), so
# that a package build after it finds them built; make test builds them beside the umockdev suite.
package-binaries:
	$(MAKE) --no-print-directory BUILD_DEPS= REPRODUCIBLE=1 release-static

# Man pages and completions from the binaries in PACKAGE_BIN: any build of these sources, on any
# architecture, writes the same ones.
PACKAGE_BIN ?= $(STATIC_BUILD)/release
generated-files:
	rm -rf $(PACKAGE_OUT) && mkdir -p $(PACKAGE_OUT)/man $(PACKAGE_OUT)/completions
	scripts/package/generate-manual $(PACKAGE_BIN) $(PACKAGE_OUT)/man
	$(PACKAGE_BIN)/orientd check-config --manual-page > $(PACKAGE_OUT)/man/orientd.toml.5
	sed -i '/^$$/d' $(PACKAGE_OUT)/man/*  # groff warns of empty input lines; mdoc paragraphs are .Pp
	for tool in orientd orientctl; do \
		$(PACKAGE_BIN)/$$tool --generate-completion-script bash | sed '1{/^#!/d}' > $(PACKAGE_OUT)/completions/$$tool.bash && \
		$(PACKAGE_BIN)/$$tool --generate-completion-script zsh > $(PACKAGE_OUT)/completions/_$$tool && \
		$(PACKAGE_BIN)/$$tool --generate-completion-script fish > $(PACKAGE_OUT)/completions/$$tool.fish || exit 1; \
	done

# What the package holds, laid out as Debian wants it (used by debian/rules).
# Where the release being built wants units and udev rules: /lib on Debian 12, /usr/lib on Debian 13
# (whose lintian calls /lib an aliased location), as its systemd and udev pkg-config files say.
PACKAGE_UNITDIR = $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
PACKAGE_UDEVDIR = $(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/lib/udev)
install-package-files:
	$(MAKE) install-files PREFIX=/usr SYSCONFDIR=/etc UNITDIR=$(PACKAGE_UNITDIR) USERUNITDIR=/usr/lib/systemd/user UDEVRULESDIR=$(PACKAGE_UDEVDIR)/rules.d \
		DBUSPOLICYDIR=/usr/share/dbus-1/system.d \
		ORIENTD_BIN=$(STATIC_BUILD)/release/orientd ORIENTCTL_BIN=$(STATIC_BUILD)/release/orientctl
	install -d $(DESTDIR)/usr/share/man/man1 $(DESTDIR)/usr/share/man/man5 $(DESTDIR)/usr/share/man/man8
	install -m644 $(PACKAGE_OUT)/man/orientctl.1 $(DESTDIR)/usr/share/man/man1/
	install -m644 $(PACKAGE_OUT)/man/orientd.toml.5 $(DESTDIR)/usr/share/man/man5/
	install -m644 $(PACKAGE_OUT)/man/orientd.8 $(DESTDIR)/usr/share/man/man8/
	for tool in orientd orientctl; do \
		install -Dm644 $(PACKAGE_OUT)/completions/$$tool.bash $(DESTDIR)/usr/share/bash-completion/completions/$$tool && \
		install -Dm644 $(PACKAGE_OUT)/completions/_$$tool $(DESTDIR)/usr/share/zsh/vendor-completions/_$$tool && \
		install -Dm644 $(PACKAGE_OUT)/completions/$$tool.fish $(DESTDIR)/usr/share/fish/vendor_completions.d/$$tool.fish || exit 1; \
	done

# dist/orientd_VERSION_ARCH.deb with Debian's own tooling (debian/), then lintian on it. Errors fail;
# the warnings kept are explained in docs/install.md.
# ARCH=arm64 on amd64: cross-compiled and packaged in a Debian 13 arm64 root (scripts/cross/cross-deb).
deb:
ifneq ($(ARCH),$(HOST_ARCH))
	scripts/cross/cross-deb $(ARCH)
else
	scripts/ensure-deps --package
	dpkg-buildpackage -b -us -uc --build-profiles=pkg.orientd.toolchain
	mkdir -p dist
	mv ../orientd_$(VERSION)_$(ARCH).deb ../orientd_$(VERSION)_$(ARCH).buildinfo ../orientd_$(VERSION)_$(ARCH).changes dist/
	lintian --fail-on error --info dist/orientd_$(VERSION)_$(ARCH).deb
endif

# The source package (dist/orientd_VERSION.dsc and its tarball, the Swift packages in vendor/), checked
# by lintian; and its offline build by Debian's swiftlang in a clean sid root, twice (reproducible),
# with autopkgtest (about 25 minutes; not part of make test).
source:
	scripts/ensure-deps --package
	scripts/package/make-source

source-test:
	scripts/ensure-deps --package
	scripts/package/test-source

# The arm64 package installed and run in a Debian 13 arm64 root under qemu-user, and compared with
# the amd64 package (about two minutes once the root exists; not part of make test).
test-arm64:
	scripts/package/test-debian13 arm64

package-test: deb
	scripts/package/test-package dist/orientd_$(VERSION)_$(ARCH).deb

# This machine's package installed and run on Debian 13 too, in a trixie root (part of make test).
package-trixie-test: deb
	scripts/package/test-debian13 $(ARCH)

# Installs the package on THIS machine with apt, checks what the maintainer scripts did, then removes
# and purges it: for a throwaway machine only (not part of make test, which must be safe anywhere).
package-install-test: deb
	scripts/package/test-package-install dist/orientd_$(VERSION)_$(ARCH).deb

# The package on a real kernel (docs/testing.md): Debian 12's own kernel under qemu (TCG) on a Debian 12
# root with systemd, udev, dbus and polkit, made once per machine in /var/cache/orientd-vm
# (scripts/vm/vm-root); the package (dist/orientd_*_amd64.deb, from make deb) installed there with apt,
# then the checks of Tests/vm/checks run inside, each reported here (scripts/vm/vm-test). CHECK=name
# (or CHECK="a b") runs only those. vm-shell: the same VM, a root shell on its console. make test runs
# it last, on the package its package phase built.
.PHONY: vm-test vm-shell
CHECK ?=
vm-test:
	scripts/vm/vm-test $(foreach check,$(CHECK),--check $(check))

vm-shell:
	scripts/vm/vm-test --shell

install: release install-files
	@echo "installed; enable with: systemd-sysusers; systemd-tmpfiles --create; udevadm control --reload; systemctl daemon-reload; systemctl enable --now orientd.socket"

# The files only, from already built binaries (used by install and by the tests).
install-files:
	install -Dm755 $(ORIENTD_BIN) $(DESTDIR)$(BINDIR)/orientd
	install -Dm755 $(ORIENTCTL_BIN) $(DESTDIR)$(BINDIR)/orientctl
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/local/bin/|$(BINDIR)/|g; s|/usr/local/share/doc/orientd/|$(DOCDIR)/|g' systemd/orientd.service > $(DESTDIR)$(UNITDIR)/orientd.service
	chmod 644 $(DESTDIR)$(UNITDIR)/orientd.service
	install -Dm644 systemd/orientd.socket $(DESTDIR)$(UNITDIR)/orientd.socket
	install -d $(DESTDIR)$(USERUNITDIR) $(DESTDIR)$(DOCDIR)/examples
	sed 's|/usr/local/bin/|$(BINDIR)/|g' systemd/orientctl-follow.service > $(DESTDIR)$(USERUNITDIR)/orientctl-follow.service
	sed 's|/usr/local/bin/|$(BINDIR)/|g' systemd/examples/orientctl-follow-kiosk.service > $(DESTDIR)$(DOCDIR)/examples/orientctl-follow-kiosk.service
	chmod 644 $(DESTDIR)$(USERUNITDIR)/orientctl-follow.service $(DESTDIR)$(DOCDIR)/examples/orientctl-follow-kiosk.service
	install -Dm644 systemd/60-orientd.rules $(DESTDIR)$(UDEVRULESDIR)/60-orientd.rules
	install -Dm644 systemd/orientd.sysusers $(DESTDIR)$(SYSUSERSDIR)/orientd.conf
	install -Dm644 systemd/orientd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/orientd.conf
	install -Dm644 systemd/net.hadess.SensorProxy.conf $(DESTDIR)$(DBUSPOLICYDIR)/net.hadess.SensorProxy.conf
	install -Dm644 systemd/net.hadess.SensorProxy.policy $(DESTDIR)$(POLKITACTIONSDIR)/net.hadess.SensorProxy.policy
	install -Dm644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/orientd/orientd.toml ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/orientd/orientd.toml"; \
	else install -Dm644 systemd/orientd.toml $(DESTDIR)$(SYSCONFDIR)/orientd/orientd.toml; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/orientd $(DESTDIR)$(BINDIR)/orientctl
	rm -f $(DESTDIR)$(UNITDIR)/orientd.service $(DESTDIR)$(UNITDIR)/orientd.socket $(DESTDIR)$(USERUNITDIR)/orientctl-follow.service
	rm -f $(DESTDIR)$(DOCDIR)/examples/orientctl-follow-kiosk.service
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(USERUNITDIR) 2>/dev/null
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-orientd.rules $(DESTDIR)$(SYSUSERSDIR)/orientd.conf $(DESTDIR)$(TMPFILESDIR)/orientd.conf
	rm -f $(DESTDIR)$(DBUSPOLICYDIR)/net.hadess.SensorProxy.conf $(DESTDIR)$(POLKITACTIONSDIR)/net.hadess.SensorProxy.policy
	rm -f $(DESTDIR)$(DOCDIR)/README.md $(addprefix $(DESTDIR)$(DOCDIR)/,$(wildcard docs/*.md))
	-rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null
	@echo "kept $(DESTDIR)$(SYSCONFDIR)/orientd/orientd.toml (remove it by hand if you no longer need it)"

clean:
	rm -rf .build $(STATIC_BUILD) dist debian/orientd debian/.debhelper debian/debhelper-build-stamp debian/files debian/*.substvars debian/*.debhelper.log
