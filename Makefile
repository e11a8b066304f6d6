# Quick start: `make run` (venv + release build + default comparison), `make test`, `make bench`.
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
STAMP   := $(VENV)/.deps-installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null) Cargo.toml pyproject.toml
BUILT   := $(VENV)/.built

.PHONY: venv build run test test-rust test-python bench fuzz fmt lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.5,<2" "numpy>=1.22" "pandas>=1.5" "matplotlib>=3.5" "pytest>=7" "libcachesim>=0.3" ruff "pyarrow>=14" "dask[distributed]>=2023.1" "tomli-w>=1.0" "tqdm>=4.60"
	touch $@

build: $(BUILT)

$(BUILT): $(STAMP) $(SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --quiet
	touch $@

run: build
	$(VENV)/bin/ssdlab compare --out results

test-rust:
	cargo test --workspace --exclude ssdlab-py

test-python: build
	$(PY) -m pytest -q tests

test: test-rust test-python

bench: build
	$(PY) benches/waf_table.py
	$(PY) benches/bench.py
	$(PY) benches/bench_sweep.py

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

clean:
	rm -rf target $(VENV) results python/ssdlab/*.so
