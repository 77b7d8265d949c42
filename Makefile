# Two commands for a fresh machine: `make run` and `make test` (README).
# Both create .venv, install what is needed and build the Rust engine.

SHELL   := /bin/bash
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
STAMP   := $(VENV)/.deps-stamp
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: run test build install bench bench-simso bench-scale clean test-rust test-python lock browser

$(PY):
	python3 -m venv $(VENV)

# Exactly the versions of requirements.lock, each checked against its hash;
# `make lock` refreshes the lock (docs/setup.md).
$(STAMP): requirements.lock | $(PY)
	$(PIP) install --quiet --require-hashes --no-deps -r requirements.lock
	touch $(STAMP)

install: $(STAMP)

build: install
	$(VENV)/bin/maturin develop --release --quiet
	cargo build --release --quiet -p criticore-rt --bin criticore-watchdog --bin criticore-worker
	install -D -m 755 $${CARGO_TARGET_DIR:-target}/release/criticore-watchdog python/criticore/_core/_bin/criticore-watchdog
	install -D -m 755 $${CARGO_TARGET_DIR:-target}/release/criticore-worker python/criticore/_core/_bin/criticore-worker

run: build
	$(VENV)/bin/criticore analyze examples/mc2-llc-heavy.toml
	$(VENV)/bin/criticore analyze examples/mc2-llc-light.toml
	$(VENV)/bin/criticore simulate examples/mrs-synthetic.toml --duration 10s
	$(VENV)/bin/criticore optimize examples/study-fig15a.toml

# Each suite's log goes to target/; the last lines of `make test` count what
# ran, passed and was skipped, with each skip's reason (tools/test_summary.py).
RUST_LOG   := target/test-rust.log
PY_REPORT  := target/test-python.xml
PY_RUNTIME_REPORT := target/test-python-runtime.xml

test-rust:
	mkdir -p target
	set -o pipefail; cargo test --workspace --exclude criticore-py 2>&1 | tee $(RUST_LOG) \
		| { grep -E --line-buffered '^error|FAILED|ignored(,| \()|^skipped ' || true; } \
		|| { sed -n '/^failures:$$/,/^test result/p' $(RUST_LOG) | head -300; echo "whole log: $(RUST_LOG)"; exit 1; }

# tests/report opens every report page in headless Chromium (Debian's
# package; as root, or with sudo rights to apt-get). Without it those tests
# are skipped with the reason, never passed.
browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed: tests/report's browser checks will be skipped"

# The tests that time real processes (marked `runtime`, tests/conftest.py)
# run alone after the rest, which runs on both cores (pytest-xdist).
test-python: build browser
	mkdir -p target
	rc=0; $(PY) -m pytest -q -rfEs -n 2 -m "not runtime" --junitxml=$(PY_REPORT) || rc=1; \
		$(PY) -m pytest -q -rfEs -m runtime --junitxml=$(PY_RUNTIME_REPORT) || rc=1; exit $$rc

# Both suites run even when the first fails; the summary counts both.
test: install
	rm -f $(RUST_LOG) $(PY_REPORT) $(PY_RUNTIME_REPORT); rc=0; $(MAKE) --no-print-directory test-rust || rc=1; $(MAKE) --no-print-directory test-python || rc=1; \
		$(PY) tools/test_summary.py $(RUST_LOG) $(PY_REPORT) $(PY_RUNTIME_REPORT); exit $$rc

bench: build
	$(PY) benches/analysis_reference.py

# Simulator against SimSo (issue 3), in a benchmark-only environment: SimSo
# 0.8.5 and its pinned SimPy 2.3.1 go into .venv-simso, never into .venv or the
# package's dependencies. Cross-check of job finish times (~4 min), then
# jobs/s of criticore and SimSo on the same systems (~2 min).
SIMSO_VENV  := .venv-simso
SIMSO_STAMP := $(SIMSO_VENV)/.simso-stamp

$(SIMSO_STAMP):
	python3 -m venv $(SIMSO_VENV)
	$(SIMSO_VENV)/bin/pip install --quiet --upgrade pip
	$(SIMSO_VENV)/bin/pip install --quiet "simso==0.8.5" "SimPy==2.3.1"
	touch $(SIMSO_STAMP)

bench-simso: build $(SIMSO_STAMP)
	$(PY) benches/simso_crosscheck.py
	$(PY) benches/sim_vs_simso.py

# The simulator at scale against SchedCAT's native G-EDF and SimSo (issue 13).
# SchedCAT is cloned beside the repository, never into it (benches/RESULTS.md).
bench-scale: build $(SIMSO_STAMP)
	$(PY) benches/sim_scale.py

# Refresh requirements.lock from pyproject.toml (dependencies, test extra) and
# requirements.in (build and notebook tools), for CPython 3.11 on Linux x86_64.
# Pins already in the lock are kept unless UPGRADE=1. uv runs from its own
# throwaway venv, never .venv. Then `rm -rf .venv && make test`, and commit.
LOCK_VENV := .venv-lock
UV_VERSION := 0.13.9

lock:
	test -x $(LOCK_VENV)/bin/uv || (python3 -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/pip install --quiet "uv==$(UV_VERSION)")
	$(LOCK_VENV)/bin/uv pip compile --quiet pyproject.toml requirements.in --extra test --generate-hashes \
		--python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
		--custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) -o requirements.lock

clean:
	rm -rf $(VENV) $(SIMSO_VENV) $(LOCK_VENV) target
