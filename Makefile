# Two commands set everything up on a new machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test lint typecheck unit bench soak cluster cluster-bench nginx clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/grattage demo

test: $(STAMP) lint typecheck
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(PY) -m pytest tests/unit -q

bench: $(STAMP)
	$(PY) -m bench

# The reliability suite (issue 7) at full length: ≥ 20 SIGKILLs per database, ≥ 10 000 fuzzed
# requests... Its figures are printed at the end and kept in test-artifacts/; see RELIABILITY.md.
soak: $(STAMP)
	rm -f test-artifacts/reliability-figures.jsonl
	GRATTAGE_SOAK=1 $(PY) -m pytest tests/reliability -m 'not browser' $(PYTEST_ARGS)

# The cluster (issue 17): PostgreSQL, a witness, 3 app hosts behind nginx and a load generator,
# each in a network namespace of its own (root needed), started from deploy/'s files; the
# faults (a host killed, the database cut off, a rolling restart) under load, then torn down.
# tests/cluster/; the figures are printed at the end (RELIABILITY.md has the last ones).
cluster: $(STAMP) nginx
	$(PY) -m pytest tests/cluster -m cluster -p no:cacheprovider $(PYTEST_ARGS)

# Purchases/s, p99 and purchases per CPU-second of the app hosts, with 1, 2 and 3 app hosts.
cluster-bench: $(STAMP) nginx
	$(PY) -m bench.cluster

nginx:
	@command -v nginx >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; }

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
