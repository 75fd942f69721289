# Two entry points: `make demo` (the main job on bundled data) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench fuzz install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'

demo: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/chatcodec demo

test: install
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python bench/run.py

# FUZZ_N inputs per format (seeded by FUZZ_SEED); exits 1 on any violation.
FUZZ_N ?= 10000
FUZZ_SEED ?= 1
fuzz: install
	$(BIN)/python fuzz/run.py --per-format $(FUZZ_N) --seed $(FUZZ_SEED)

clean:
	rm -rf $(VENV) dist build .pytest_cache .hypothesis
