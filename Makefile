# Two entry points: `make demo` (the main job on bundled data) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench install clean

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

clean:
	rm -rf $(VENV) dist build .pytest_cache .hypothesis
