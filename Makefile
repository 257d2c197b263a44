# Two set-up commands, each doing its own set-up: `make render` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= dev
CONFIG_FILE ?=
OUT ?=

RENDER_ARGS := --stack $(STACK)
ifneq ($(CONFIG_FILE),)
RENDER_ARGS += --config-file $(CONFIG_FILE)
endif
ifneq ($(OUT),)
RENDER_ARGS += --out $(OUT)
endif

.PHONY: venv render test lint format snapshot bench clean docs

$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	touch $@

venv: $(VENV)/.installed

render: venv
	$(PY) -m eks_gpu_platform.offline $(RENDER_ARGS)

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: venv
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# pytest exits 5 when it collects no test: that is a failure here, not a pass.
test: lint
	$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

clean:
	rm -rf build $(VENV)

docs: venv
	$(PY) -m eks_gpu_platform.docs

# Rewrite the replacement-safety snapshots (snapshots/<stack>.json) on purpose.
snapshot: venv
	$(PY) -m eks_gpu_platform.offline.snapshot

# Render timings and memory per stack and per node pool, and the test suite's wall time.
bench: venv
	$(PY) benchmarks/bench.py
