# Quick start: `make run` (venv + release build + default comparison), `make test`, `make bench`,
# `make wheel` (an installable wheel in dist/).
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
STAMP   := $(VENV)/.deps-installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null) Cargo.toml pyproject.toml
BUILT   := $(VENV)/.built
ZIG     := $(VENV)/.zig-installed
DEPS    := "maturin>=1.5,<2" "numpy>=1.22" "pandas>=1.5" "matplotlib>=3.5" "pytest>=7" "libcachesim>=0.3" ruff "pyarrow>=14" "dask[distributed]>=2023.1" "tomli-w>=1.0" "tqdm>=4.60" "optuna>=3"
# Runs a command with its output held back, shown only if it fails (pip and maturin are chatty).
QUIET   := sh -c 'log=$$(mktemp) && "$$@" >"$$log" 2>&1; s=$$?; [ $$s -eq 0 ] || cat "$$log"; rm -f "$$log"; exit $$s' quiet

.PHONY: venv build run test test-rust test-debug test-python bench wheel wheel-check fuzz fmt lint readme clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@echo "make: setting up $(VENV) (Python packages, once)"
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(QUIET) $(PIP) install --upgrade pip
	@$(QUIET) $(PIP) install $(DEPS)
	@touch $@

build: $(BUILT)

# The extension's own profile (`extension`: link-time optimised, Cargo.toml); the tests build
# the engine again with `release` (README.md, Quick start, says what that costs).
$(BUILT): $(STAMP) $(SOURCES)
	@echo "make: building the engine (release; a few minutes the first time)"
	@$(QUIET) env VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --profile extension
	@touch $@

run: build
	$(VENV)/bin/ssdlab compare --out results

# The whole workspace, so that dependencies resolve with the extension's features (ssdlab-py
# itself has no Rust tests). The `release` profile: a second build of the engine beside the
# extension's `extension` profile (Cargo.toml says why).
test-rust:
	cargo test --release --workspace

# The same tests unoptimised, with debug assertions and overflow checks (a second build).
test-debug:
	cargo test --workspace --exclude ssdlab-py

test-python: build
	$(PY) -m pytest -q tests

test: test-rust test-python

bench: build
	$(PY) benches/waf_table.py
	$(PY) benches/bench.py
	$(PY) benches/bench_sweep.py

# An abi3 wheel for CPython >= 3.11 on glibc >= 2.17 (manylinux2014), linked with zig (from the
# ziglang package) against that glibc; `pip install dist/ssdlab-*.whl` needs no Rust.
wheel: $(STAMP) $(ZIG)
	rm -f dist/ssdlab-*.whl
	PATH=$(abspath $(VENV))/bin:$$PATH maturin build --profile extension --zig --compatibility manylinux2014 --auditwheel check --out dist
	@ls dist/ssdlab-*.whl

# zig (100 MB) only for wheels, not for `make run`.
$(ZIG): $(STAMP)
	@echo "make: installing zig into $(VENV) (for wheels, once)"
	@$(QUIET) $(PIP) install "maturin[zig]>=1.5,<2"
	@touch $@

# Installs the wheel into a fresh virtual environment without Rust and runs `ssdlab run` and
# the README's first Python example with it (also part of .ci/run).
wheel-check: wheel
	bash .ci/wheel-check.sh

# Fuzz every trace reader, format detection and the config parser for FUZZ_SECONDS each,
# FUZZ_JOBS targets at a time; FUZZ_CMIN=1 minimises each corpus afterwards
# (nightly toolchain + `cargo install cargo-fuzz`; not part of `make test`; docs/fuzzing.md).
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_CMIN    ?= 0
FUZZ_TRACES  ?= $(wildcard ../shared/traces)
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_CMIN=$(FUZZ_CMIN) \
	FUZZ_TRACES=$(abspath $(FUZZ_TRACES)) fuzz/run.sh $(FUZZ_TARGETS)

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches

lint:
	cargo fmt --all -- --check
	$(VENV)/bin/ruff check python tests benches

# Rewrite README.md's output blocks with what their commands print now (tests/test_readme.py
# checks them, and says to run this when they differ).
readme: build
	$(PY) tests/test_readme.py --update

clean:
	rm -rf target $(VENV) results dist python/ssdlab/*.so
