# Two commands for a fresh machine: `make run` and `make test` (README).
# Both create .venv, install what is needed and build the Rust engine.

VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
STAMP   := $(VENV)/.deps-stamp
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: run test build install bench bench-simso clean test-rust test-python

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.5,<2" "typer>=0.12" "rich>=13" "numpy>=1.24" "pyarrow>=14" "matplotlib>=3.7" "highspy>=1.7" "dask[distributed]>=2024.1" "pytest>=8" "hypothesis>=6"
	touch $(STAMP)

install: $(STAMP)

build: install
	$(VENV)/bin/maturin develop --release --quiet

run: build
	$(VENV)/bin/criticore analyze examples/mc2-llc-heavy.toml
	$(VENV)/bin/criticore analyze examples/mc2-llc-light.toml
	$(VENV)/bin/criticore simulate examples/mrs-synthetic.toml --duration 10s
	$(VENV)/bin/criticore optimize examples/study-fig15a.toml

test-rust:
	cargo test --workspace --exclude criticore-py --quiet

test-python: build
	$(PY) -m pytest -q

test: install test-rust test-python

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

clean:
	rm -rf $(VENV) $(SIMSO_VENV) target
