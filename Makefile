# Two commands set everything up on a new machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test lint typecheck unit bench soak clean

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

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
