# Two entry points: `make demo` (the main job on bundled data) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-servers bench fuzz install clean

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

# The vLLM and SGLang plugins, driven by the servers' own parser code: a separate environment,
# because the servers' wheels are large (vLLM alone is ~340 MB) and are installed without their
# GPU engines.
SERVERS_VENV ?= .venv-servers
SERVERS_BIN := $(SERVERS_VENV)/bin

$(SERVERS_BIN)/python:
	$(PYTHON) -m venv $(SERVERS_VENV)
	$(SERVERS_BIN)/python -m pip install --quiet --upgrade pip
	$(SERVERS_BIN)/python -m pip install --quiet -r integrations/requirements-servers.txt
	$(SERVERS_BIN)/python -m pip install --quiet --no-deps -r integrations/requirements-servers-nodeps.txt

test-servers: $(SERVERS_BIN)/python
	$(SERVERS_BIN)/python -m pip install --quiet -e '.[test]'
	$(SERVERS_BIN)/python -m pytest integrations

bench: install
	$(BIN)/python bench/run.py

# FUZZ_N inputs per format (seeded by FUZZ_SEED), in FUZZ_JOBS processes; exits 1 on any violation.
FUZZ_N ?= 10000
FUZZ_SEED ?= 1
FUZZ_JOBS ?= 1
fuzz: install
	$(BIN)/python fuzz/run.py --per-format $(FUZZ_N) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS)

clean:
	rm -rf $(VENV) $(SERVERS_VENV) dist build .pytest_cache .hypothesis
