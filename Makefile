# Two entry points: `make demo` (the main job on bundled data) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-servers servers-env bench fuzz install clean

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

# The servers' wheels are large downloads: retried and resumed, and the environment counts as
# installed only once every step has passed (a stamp file, not the venv's python).
SERVERS_STAMP := $(SERVERS_VENV)/.installed
PIP_PATIENT := --quiet --retries 10 --timeout 60 --resume-retries 20

$(SERVERS_STAMP):
	$(PYTHON) -m venv $(SERVERS_VENV)
	$(SERVERS_BIN)/python -m pip install --quiet --upgrade pip
	for attempt in 1 2; do \
	  $(SERVERS_BIN)/python -m pip install $(PIP_PATIENT) -r integrations/requirements-servers.txt \
	  && $(SERVERS_BIN)/python -m pip install $(PIP_PATIENT) --no-deps -r integrations/requirements-servers-nodeps.txt \
	  && break; \
	  [ $$attempt -lt 2 ] || exit 1; sleep 15; \
	done
	touch $@

servers-env: $(SERVERS_STAMP)

test-servers: $(SERVERS_STAMP)
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
