# Two set-up commands, each doing its own set-up: `make render` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= dev
CONFIG_FILE ?=
OUT ?=

# Python caches compiled modules (and pytest its assertion-rewritten tests) in the gitignored
# __pycache__/ folders: with PYTHONDONTWRITEBYTECODE set (as some CI images and containers do),
# every process of a run (each test worker, each rendered subprocess) would compile the same
# modules again, a second and a half per test worker (`make bench`).
unexport PYTHONDONTWRITEBYTECODE

RENDER_ARGS := --stack $(STACK)
ifneq ($(CONFIG_FILE),)
RENDER_ARGS += --config-file $(CONFIG_FILE)
endif
ifneq ($(OUT),)
RENDER_ARGS += --out $(OUT)
endif

.PHONY: venv render test lint format snapshot bench clean docs plan security-scan

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
	rm -rf build $(VENV) .venv-security .venv-checkov

# The security scanners (issue 22; README, "Security model"), each pinned in a virtualenv of its
# own (checkov's boto3 pin conflicts with cloudsplaining's): every finding over both stacks'
# renders and the workflows must be listed, with its reason, in security/allowlist.yaml.
.venv-security/.installed: security/requirements.txt
	$(PYTHON) -m venv .venv-security
	.venv-security/bin/python -m pip install --quiet --disable-pip-version-check -r $<
	touch $@

.venv-checkov/.installed: security/requirements-checkov.txt
	$(PYTHON) -m venv .venv-checkov
	.venv-checkov/bin/python -m pip install --quiet --disable-pip-version-check -r $<
	touch $@

security-scan: venv .venv-security/.installed .venv-checkov/.installed
	$(PY) security/scan.py

docs: venv
	$(PY) -m eks_gpu_platform.docs

# What `pulumi up` would change against another git ref (default origin/main): the ref is
# rendered from a git worktree (its own components/, put first on PYTHONPATH), this tree is
# rendered with --compare; build/plan/<stack>/new holds plan.json and plan.md (offline.plan).
BASE ?= origin/main
PLAN_DIR := build/plan/$(STACK)
plan: venv
	rm -rf $(PLAN_DIR) && mkdir -p $(PLAN_DIR)/shim
	git worktree add --detach $(PLAN_DIR)/worktree $(BASE)
	ln -s $(CURDIR)/$(PLAN_DIR)/worktree/components $(PLAN_DIR)/shim/eks_gpu_platform
	cd $(PLAN_DIR)/worktree && PYTHONPATH=$(CURDIR)/$(PLAN_DIR)/shim $(CURDIR)/$(PY) -m \
		eks_gpu_platform.offline --stack $(STACK) --no-policy --out $(CURDIR)/$(PLAN_DIR)/base \
		|| { git -C $(CURDIR) worktree remove --force $(PLAN_DIR)/worktree; exit 1; }
	git worktree remove --force $(PLAN_DIR)/worktree
	$(PY) -m eks_gpu_platform.offline --stack $(STACK) --no-policy --out $(PLAN_DIR)/new \
		--compare $(PLAN_DIR)/base
	@echo "plan: $(PLAN_DIR)/new/plan.md"

# Rewrite the replacement-safety snapshots (snapshots/<stack>.json) on purpose.
snapshot: venv
	$(PY) -m eks_gpu_platform.offline.snapshot

# Render timings against the SDK-import floor, per node pool and for 500 pools, and the test
# suite's wall time; rewrites README's benchmark table.
bench: venv
	$(PY) benchmarks/bench.py --readme
