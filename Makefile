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

.PHONY: venv render-venv render validate validate-rbac test lint format snapshot bench clean docs \
	plan lock security-scan conformance conformance-bins conformance-inputs conformance-probe \
	mutation-score

# Two stages in one virtualenv (the program's .venv): `make render` (and plan, snapshot, docs,
# and every CI job that previews or deploys) installs requirements.lock, every package pinned
# with its hashes (`--require-hashes`: a download whose hash differs is refused; `--no-deps`:
# the lock is complete), then this project itself, editable, without its dependencies and
# with the locked setuptools (pip cannot hash a local editable package, so it is not in the
# lock); `make test` (and lint, format, bench) adds requirements-dev.txt on top.
$(VENV)/.render-installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
		-r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.installed: $(VENV)/.render-installed requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	touch $@

render-venv: $(VENV)/.render-installed

# requirements.lock: requirements.txt (without its `-e .`) and the build backend of this
# project (requirements-build.txt), resolved with every transitive dependency and the sha256
# of every distribution of each pinned version (so it installs on any platform the resolution
# covers: `--universal`, Python 3.11 and later, CI's linux x86_64 included). uv is pinned in
# requirements-dev.txt. Needs PyPI; commit the result.
lock: venv
	mkdir -p build/lock
	grep -v '^-e ' requirements.txt > build/lock/requirements.in
	$(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
		--custom-compile-command "make lock" --output-file requirements.lock \
		build/lock/requirements.in requirements-build.txt

venv: $(VENV)/.installed

render: render-venv
	$(PY) -m eks_gpu_platform.offline $(RENDER_ARGS)

# Validate a deployed stack's cluster against its render (docs/validation.md): the render is made
# first from the same stack file. KUBECONFIG (one file; default $KUBECONFIG or ~/.kube/config),
# PHASES (comma-separated; default deployment,scheduling,security), DRY_RUN=1 (print the plan and
# its cost, change nothing), VALIDATE_ARGS (any other option, e.g. --pool gpu-spot).
KUBECONFIG ?=
PHASES ?=
DRY_RUN ?=
VALIDATE_ARGS ?=
validate: render
	$(PY) -m eks_gpu_platform.validate --stack $(STACK) $(if $(OUT),--render $(OUT)) \
		$(if $(KUBECONFIG),--kubeconfig $(KUBECONFIG)) $(if $(PHASES),--phases $(PHASES)) \
		$(if $(filter 1,$(DRY_RUN)),--dry-run) $(VALIDATE_ARGS)

# The validation's least-privilege ClusterRole and its binding for the stack's render (YAML for
# `kubectl apply -f -`; docs/validation.md, "Least-privilege RBAC").
validate-rbac: render
	$(PY) -m eks_gpu_platform.validate.rbac --stack $(STACK) $(if $(OUT),--render $(OUT))

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: venv
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# pytest exits 5 when it collects no test: that is a failure here, not a pass. The tests read
# Karpenter's CRDs, chart values and bootstrap code from the Go module tests/conformance/go.mod
# pins (tests/upstream_modules.py: go mod download under GO_TOOLCHAIN, checked by go.sum): make
# test needs Go (1.21 or newer) and, the first time, the Go module proxy.
test: lint
	$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

clean:
	rm -rf build $(VENV) .venv-security .venv-checkov

# The security scanners (issue 22; docs/security.md), each pinned in a virtualenv of its
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

docs: render-venv
	$(PY) -m eks_gpu_platform.docs

# What `pulumi up` would change against another git ref (default origin/main): the ref is
# rendered from a git worktree (its own components/, put first on PYTHONPATH), this tree is
# rendered with --compare; build/plan/<stack>/new holds plan.json and plan.md (offline.plan).
# The base render's console goes to build/plan/<stack>/base.txt: the output ends with the
# new render's, the plan's path and what `pulumi up` would refuse (offline.render).
# An interrupted plan leaves no stale worktree behind (issue 23, point 8d): the worktree is
# removed on any exit of the recipe's shell (a signal exits through the EXIT trap), and a
# leftover from a killed run (SIGKILL, a lost machine) is removed first, and `add --force`
# takes over a path git still has registered but whose folder is gone (what `git worktree
# prune` would clear; prune is not run: it touches every worktree of the repository).
BASE ?= origin/main
PLAN_DIR := build/plan/$(STACK)
PLAN_WORKTREE := $(CURDIR)/$(PLAN_DIR)/worktree
plan: render-venv
	@set -e; \
	git worktree remove --force $(PLAN_WORKTREE) 2>/dev/null || true; \
	rm -rf $(PLAN_DIR); mkdir -p $(PLAN_DIR)/shim; \
	trap 'git -C $(CURDIR) worktree remove --force $(PLAN_WORKTREE) 2>/dev/null || true' EXIT; \
	trap 'exit 130' INT TERM HUP; \
	git worktree add --force --detach $(PLAN_WORKTREE) $(BASE); \
	ln -s $(PLAN_WORKTREE)/components $(PLAN_DIR)/shim/eks_gpu_platform; \
	( cd $(PLAN_WORKTREE) && PYTHONPATH=$(CURDIR)/$(PLAN_DIR)/shim $(abspath $(PY)) -m \
		eks_gpu_platform.offline --stack $(STACK) --no-policy --out $(CURDIR)/$(PLAN_DIR)/base \
		> $(CURDIR)/$(PLAN_DIR)/base.txt ); \
	git worktree remove --force $(PLAN_WORKTREE); \
	$(PY) -m eks_gpu_platform.offline --stack $(STACK) --no-policy --out $(PLAN_DIR)/new \
		--compare $(PLAN_DIR)/base

# Rewrite the replacement-safety snapshots (snapshots/<stack>.json) on purpose.
snapshot: render-venv
	$(PY) -m eks_gpu_platform.offline.snapshot

# Render timings against the SDK-import floor, per node pool and for 500 pools, and the test
# suite's wall time; rewrites the table in docs/benchmarks.md.
bench: venv
	$(PY) benchmarks/bench.py --write

# The conformance suite (tests/conformance, Go): the rendered stacks judged by a real kube-apiserver
# and etcd and by the real Karpenter v1.15 (docs/conformance.md), and the validation CLI
# (python -m eks_gpu_platform.validate, CONFORMANCE_PYTHON) run against them. Needs Go 1.26 and the Go module
# proxy. Karpenter 1.15's modules need a newer Go than the machines ship (sigs.k8s.io/karpenter v1.15.0:
# go >= 1.26.9; github.com/aws/karpenter-provider-aws v1.15.x: >= 1.26.9/1.26.10): every Go command here
# runs with GOTOOLCHAIN=$(GO_TOOLCHAIN), which the go command fetches once from the module proxy
# (golang.org/toolchain, checked against sum.golang.org) and runs instead of the installed Go; a module
# that wants a Go newer still fails at once instead of downloading another.
GO ?= go
CONF := tests/conformance
CONF_OUT := build/conformance
ENVTEST_BIN := $(CONF)/.bin/envtest
# kube-apiserver and etcd come from the wrapper module tests/conformance/k8sbins (its go.mod pins
# k8s.io/kubernetes and every k8s.io staging module it replaces); the ldflags make /version report the
# real version, which Karpenter's and client tools' version checks read
# (k8s.io/component-base/version/base.go).
K8S_VERSION := 1.36.3
K8S_MINOR := $(word 2,$(subst ., ,$(K8S_VERSION)))
K8S_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=v$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(K8S_MINOR) \
	-X k8s.io/component-base/version.gitTreeState=clean \
	-X k8s.io/client-go/pkg/version.gitVersion=v$(K8S_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=1 \
	-X k8s.io/client-go/pkg/version.gitMinor=$(K8S_MINOR)
GO_TOOLCHAIN := go1.27.3
GO_ENV := GOTOOLCHAIN=$(GO_TOOLCHAIN) CGO_ENABLED=0

$(ENVTEST_BIN)/kube-apiserver: $(CONF)/k8sbins/go.mod $(CONF)/k8sbins/go.sum
	cd $(CONF)/k8sbins && $(GO_ENV) $(GO) build -trimpath -ldflags "$(K8S_LDFLAGS)" \
		-o $(CURDIR)/$@ k8s.io/kubernetes/cmd/kube-apiserver

$(ENVTEST_BIN)/etcd: $(CONF)/k8sbins/go.mod $(CONF)/k8sbins/go.sum
	cd $(CONF)/k8sbins && $(GO_ENV) $(GO) build -trimpath -ldflags "-s -w" \
		-o $(CURDIR)/$@ go.etcd.io/etcd/server/v3

conformance-bins: $(ENVTEST_BIN)/kube-apiserver $(ENVTEST_BIN)/etcd

# The renders the suite judges (dev, prod, every other stack file, dev at 1.35, generated stacks),
# and the known-bad copies of dev, prod and dev-1.35 it must reject (tests/conformance/mutate.py).
conformance-inputs: venv
	rm -rf $(CONF_OUT) && mkdir -p $(CONF_OUT)
	$(PY) $(CONF)/stacks.py $(CONF_OUT)
	$(PY) $(CONF)/mutate.py $(CONF_OUT)/renders $(CONF_OUT)/bad
	$(PY) $(CONF)/instance_data.py $(CONF_OUT)/renders/*/ --out $(CONF_OUT)/instance-types.json

conformance-probe:
	GOTOOLCHAIN=$(GO_TOOLCHAIN) python3 $(CONF)/probe.py

conformance: conformance-probe conformance-bins conformance-inputs
	cd $(CONF) && $(GO_ENV) KUBEBUILDER_ASSETS=$(CURDIR)/$(ENVTEST_BIN) \
		CONFORMANCE_REPO=$(CURDIR) CONFORMANCE_RENDERS=$(CURDIR)/$(CONF_OUT)/renders \
		CONFORMANCE_BAD=$(CURDIR)/$(CONF_OUT)/bad \
		CONFORMANCE_INSTANCE_DATA=$(CURDIR)/$(CONF_OUT)/instance-types.json \
		CONFORMANCE_PYTHON=$(abspath $(PY)) \
		$(GO) test ./... -count=1 -timeout 60m

# The suite's mutation score (docs/conformance.md): each bug of tests/conformance/mutations.yaml put
# into a copy of the repository (the Python builders, or a known-bad render), its stacks rendered,
# only the tests it names run with test binaries built once; prints caught/missed and exits 1 when
# one is missed. MUTATION_ARGS: e.g. --only budget-pool-plus-8, --report-only, --markdown FILE.
MUTATION_ARGS ?=
mutation-score: conformance-probe conformance-bins venv
	$(GO_ENV) GO=$(GO) KUBEBUILDER_ASSETS=$(CURDIR)/$(ENVTEST_BIN) \
		$(PY) $(CONF)/mutation_score.py $(MUTATION_ARGS)
