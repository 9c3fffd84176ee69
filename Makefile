# The two commands of the README: `make run` (the main job) and `make test` (the suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# pytest-xdist workers: one per core (`make test PYTEST_WORKERS=0` runs in one process); an idle
# worker takes queued tests from a busy one (worksteal), so the long tests do not end the run alone.
PYTEST_WORKERS ?= auto
# More pytest options, e.g. `make test PYTEST_ARGS=--maxfail=1` (scripts/check-fresh-clone.sh).
PYTEST_ARGS ?=

.PHONY: run test lint typecheck bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	rm -f $(VENV)/.installed-* && touch $@

run: $(STAMP)
	$(BIN)/abridged replay examples/agent-session.jsonl --window 16k --report build/replay-report.html

# PostgreSQL and Chromium from the system's packages where it can (else their tests skip).
test: $(STAMP)
	scripts/install-system-deps.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
