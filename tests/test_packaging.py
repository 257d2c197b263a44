"""The library as others consume it: install, package schema, generated docs.

The GitHub workflows are tested in test_workflows.py.
"""

import dataclasses
import fcntl
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from stock_schema import stock_schema

from eks_gpu_platform import docs
from eks_gpu_platform.offline.render import load_stack_file, render
from eks_gpu_platform.platform import platform_config_from_args
from eks_gpu_platform.policies.offline import evaluate, report
from eks_gpu_platform.policies.rules import RULES

REPO = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


PUBLIC = (
    "GpuPlatform",
    "EksCluster",
    "Karpenter",
    "Network",
    "NodePool",
    "EfaDevicePlugin",
    "PlatformConfig",
    "SpecError",
)


def test_package_schema_publishes_the_platform_component() -> None:
    schema = stock_schema()
    resource = schema["resources"]["eks-gpu-platform:index:GpuPlatform"]
    assert resource["isComponent"] is True
    assert sorted(resource["inputProperties"]) == [
        "cluster",
        "gpuOperator",
        "karpenter",
        "nodePools",
        "region",
        "scheduler",
        "systemNodeGroup",
        "tags",
        "validation",
        "vpc",
    ]
    assert resource["requiredInputs"] == ["cluster"]  # region falls back to aws:region
    # Outputs, descriptions and enums in detail: tests/test_schema.py.
    assert len(resource["properties"]) == 12
    pool = schema["types"]["eks-gpu-platform:index:NodePoolInputs"]
    assert pool["required"] == ["name"]
    assert pool["properties"]["capacityTypes"]["items"] == {
        "description": pool["properties"]["capacityTypes"]["description"],
        "$ref": "#/types/eks-gpu-platform:index:NodePoolCapacityType",
    }
    assert pool["properties"]["limits"] == {
        "description": "Caps: gpus, cpu, memory.",
        "$ref": "#/types/eks-gpu-platform:index:LimitsInputs",
    }


def test_hosted_args_arrive_snake_case_and_parse_into_the_same_config() -> None:
    config = platform_config_from_args(
        {
            "region": "us-west-2",
            "cluster": {"name": "hosted", "kubernetes_version": "1.35"},
            "node_pools": [
                {
                    "name": "l4",
                    "gpus": ["l4"],
                    "limits": {"gpus": 4},
                    "labels": {"team_name": "research"},
                }
            ],
            "tags": {"cost_center": "ml"},
        }
    )
    assert config.cluster.kubernetes_version == "1.35"
    assert config.node_pools[0].labels == {"team_name": "research"}
    assert config.tags == {"cost_center": "ml"}


@pytest.mark.parametrize("page", sorted(docs.PAGES))
def test_generated_sections_match_the_code(page: str) -> None:
    text = (REPO / page).read_text()
    assert docs.render_page(text, docs.PAGES[page], page) == text, f"{page} is stale: make docs"


def test_every_generated_section_is_in_exactly_one_page() -> None:
    placed = sorted(name for names in docs.PAGES.values() for name in names)
    assert placed == sorted(docs.SECTIONS)
    # README.md is the user guide: the generated references live in docs/ only.
    pages = {"README.md": (REPO / "README.md").read_text()}
    pages |= {str(p.relative_to(REPO)): p.read_text() for p in sorted((REPO / "docs").glob("*.md"))}
    found = {
        name: [page for page, text in pages.items() if docs.BEGIN.format(name=name) in text]
        for name in docs.SECTIONS
    }
    assert found == {
        "component-inputs": ["docs/components.md"],
        "config-reference": ["docs/configuration.md"],
        "versions": ["docs/versions.md"],
        "policies": ["docs/policies.md"],
    }


def test_a_page_without_its_markers_is_named() -> None:
    with pytest.raises(ValueError) as err:
        docs.render_page("# Versions\n", ("versions",), "docs/versions.md")
    assert str(err.value) == (
        "docs/versions.md has no <!-- BEGIN GENERATED: versions --> ... "
        "<!-- END GENERATED: versions --> section"
    )


def test_make_docs_rewrites_a_stale_page_and_check_names_it(tmp_path: Path, capsys) -> None:
    for page in docs.PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / page, tmp_path / page)
    stale = tmp_path / "docs" / "versions.md"
    fresh = stale.read_text()
    stale.write_text(fresh.replace("| Karpenter chart |", "| Karpenter chart (old) |"))
    assert docs.main(["--root", str(tmp_path), "--check"]) == 1
    assert capsys.readouterr().err == f"{stale} is stale: run `make docs`\n"
    assert docs.main(["--root", str(tmp_path)]) == 0
    assert stale.read_text() == fresh
    assert docs.main(["--root", str(tmp_path), "--check"]) == 0


# uv (pinned in requirements-dev.txt) builds and installs: the same PEP 517 build (in an
# isolated environment for the git URL install: https://docs.astral.sh/uv/concepts/projects/build/)
# and the same resolution of the wheel's Requires-Dist from the package index as pip (14 s ->
# 5.5 s for the two tests here). uv keeps its cache outside the repository and reads no pip
# configuration (https://docs.astral.sh/uv/pip/compatibility/): behind a mirror, set
# UV_DEFAULT_INDEX.
UV = [sys.executable, "-m", "uv"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The distribution's wheel, built from a copy of its sources.

    A copy, so that setuptools' ``build/`` and ``*.egg-info`` land outside the repository and
    parallel runs share no build tree. Built with the locked build backend of this interpreter
    (``--no-build-isolation``, as ``make render-venv`` installs the project; setuptools from
    requirements-build.txt): the PEP 517 build in an isolated environment made from
    ``[build-system] requires`` is the git URL install's (the test below), so it runs once, not
    twice (0.85 s of CPU in an isolated environment, 0.4 s here; the same files in the wheel).
    """
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "components", source / "components", ignore=shutil.ignore_patterns("__pycache__")
    )
    dist = root / "dist"
    build = [*UV, "build", "--quiet", "--wheel", "--no-build-isolation", "--python", sys.executable]
    build += ["--out-dir", str(dist), str(source)]
    subprocess.run(build, check=True, timeout=600)
    (built,) = dist.glob("*.whl")
    return built


def test_a_local_clone_installs_by_git_file_url_at_its_commit(tmp_path: Path) -> None:
    """Issue 28, point 13 (docs/library.md, "From a local clone"): ``eks-gpu-platform @
    git+file://<clone>@<commit>`` builds from that commit, not the working tree, and the
    install records the clone and the commit (PEP 610 ``direct_url.json``). ``--no-deps``:
    what is checked is the URL form, not the dependencies' resolution (the test above)."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, clone / name)
    shutil.copytree(
        REPO / "components", clone / "components", ignore=shutil.ignore_patterns("__pycache__")
    )

    def git(*args: str) -> str:
        command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
        return subprocess.run(
            command, cwd=clone, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "--quiet")
    git("add", "-A")
    git("commit", "--quiet", "-m", "one")
    commit = git("rev-parse", "HEAD")
    (clone / "components" / "uncommitted.py").write_text("")  # not at the commit: not installed
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    url = f"git+file://{clone}@{commit}"
    install = [*UV, "pip", "install", "--quiet", "--no-deps", "--python"]
    subprocess.run(
        [*install, str(env_dir / "bin" / "python"), f"eks-gpu-platform @ {url}"],
        check=True,
        timeout=600,
    )
    site = env_dir / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    package = site / "site-packages" / "eks_gpu_platform"
    assert (package / "prices.py").is_file()
    assert not (package / "uncommitted.py").exists()
    record = site / "site-packages" / f"eks_gpu_platform-{VERSION}.dist-info" / "direct_url.json"
    assert json.loads(record.read_text()) == {
        "url": f"file://{clone}",
        "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": commit},
    }


def test_wheel_ships_the_policy_pack_inside_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"eks_gpu_platform-{VERSION}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
        top_level = archive.read(f"{info}/top_level.txt").decode()
    assert wheel.name == f"eks_gpu_platform-{VERSION}-py3-none-any.whl"
    # One import name: no top-level `policies` package next to eks_gpu_platform.
    assert {name.split("/")[0] for name in names} == {"eks_gpu_platform", info}
    assert top_level == "eks_gpu_platform\n"
    shipped = sorted(n for n in names if n.startswith("eks_gpu_platform/policies/"))
    assert shipped[:3] == [
        "eks_gpu_platform/policies/__init__.py",
        "eks_gpu_platform/policies/offline.py",
        "eks_gpu_platform/policies/pack.py",
    ]
    rules = [n.removeprefix("eks_gpu_platform/policies/rules/") for n in shipped[3:]]
    assert rules == sorted(
        p.name for p in (REPO / "components" / "policies" / "rules").glob("*.py")
    )
    assert len(rules) == len(RULES) + 7  # __init__ and six helper modules (_gpu.py: issue 13)
    assert "sqs_queue_encrypted.py" in rules
    # pulumi-policy only for the CrossGuard wiring (the `policy` extra), not for the rules.
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert [line for line in requires if "pulumi-policy" in line] == [
        'Requires-Dist: pulumi-policy<2,>=1.21; extra == "policy"'
    ]


# The fresh virtualenv's bytecode, kept between runs (gitignored build/, per checkout): a first
# import compiles every module it loads (pulumi, pulumi-aws, pulumi-kubernetes: 3 of the 4 s of
# CPU of the consumer's render). The virtualenv itself is made afresh by every run at the same
# path, and PYTHONPYCACHEPREFIX puts its processes' bytecode under pycache/, keyed by that path
# (https://docs.python.org/3/using/cmdline.html#envvar-PYTHONPYCACHEPREFIX); a cached file is
# used only while its source's mtime and size match (the default, timestamp-based .pyc: PEP 552),
# and uv links each installed file from its cache, mtime included, so an unchanged dependency
# finds its bytecode and a changed one is compiled again.
PACKAGING_CACHE = REPO / "build" / "test-packaging"


@pytest.fixture
def fresh_venv() -> Iterator[tuple[Path, dict[str, str]]]:
    """``(env_dir, env)``: an empty virtualenv (no pip, no system site-packages) made afresh at
    ``build/test-packaging/venv``, and the environment its processes run with. A lock keeps two
    runs from the same checkout (two ``make test``) apart."""
    PACKAGING_CACHE.mkdir(parents=True, exist_ok=True)
    with open(PACKAGING_CACHE / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env_dir = PACKAGING_CACHE / "venv"
        shutil.rmtree(env_dir, ignore_errors=True)
        venv.create(env_dir, with_pip=False)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(PACKAGING_CACHE / "pycache")
        yield env_dir, env


def test_fresh_virtualenv_installs_the_wheel_and_renders_the_consumer_with_the_policy_pack(
    wheel: Path, fresh_venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The wheel in an isolated venv (no system or repository site-packages), its dependencies
    resolved from its own Requires-Dist against the package index; then the consumer example
    through the installed console script.

    The venv has no pip (``uv pip install --python`` installs into it); uv compiles no bytecode
    by default, as ``pip --no-compile`` (byte-compiling pulumi-aws doubles an install); the
    venv's processes keep theirs between runs (``PACKAGING_CACHE``).
    """
    env_dir, env = fresh_venv
    python = env_dir / "bin" / "python"
    subprocess.run(
        [*UV, "pip", "install", "--quiet", "--python", str(python), str(wheel)],
        check=True,
        timeout=600,
    )
    probe = (
        "import gc; gc.disable(); "
        "import os, importlib.util as u, importlib.resources as r, eks_gpu_platform as e; "
        f"print(','.join(n for n in {PUBLIC!r} if hasattr(e, n))); "
        "print(r.files('eks_gpu_platform').joinpath('py.typed').is_file()); "
        "print(e.__file__); "
        "print(u.find_spec('pulumi_policy'), u.find_spec('policies'), flush=True); "
        "os._exit(0)"
    )
    # The probe runs while the console script renders (two processes that each import the
    # SDKs: side by side, not one after the other). ``hasattr`` loads the components and with
    # them the SDKs: the probe runs as the render's command line does (collector off, no
    # interpreter teardown; offline/__main__.py, render.cli).
    probing = subprocess.Popen(
        [str(python), "-c", probe],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    rendered = tmp_path / "consumer"
    try:
        result = subprocess.run(
            [
                str(env_dir / "bin" / "eks-gpu-platform-render"),
                "--project-dir",
                str(REPO / "examples" / "consumer"),
                "--stack",
                "dev",
                "--out",
                str(rendered),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env=env,
        )
        out, err = probing.communicate(timeout=120)
    finally:
        if probing.poll() is None:
            probing.kill()
            probing.wait()
    assert probing.returncode == 0, err
    site = env_dir / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert out.splitlines() == [
        ",".join(PUBLIC),
        "True",
        str(site / "site-packages" / "eks_gpu_platform" / "__init__.py"),
        "None None",
    ]
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # No violation; what `pulumi up` would still refuse (the example's deployer) follows the
    # policy line and ends the output (issue 28, point 11).
    (policy,) = [line for line in lines if line.startswith("Policy pack: ")]
    assert policy.startswith(f"Policy pack: {len(RULES)} rules, no violations")
    assert (rendered / "policy.txt").read_text() == ""
    assert "Policy pack: no violations" in (rendered / "summary.md").read_text()
    # The validation's console script, installed without the `validate` extra: its options and
    # the render are checked before the Kubernetes client is imported (issue 24).
    validate = subprocess.run(
        [
            str(env_dir / "bin" / "eks-gpu-platform-validate"),
            "--stack",
            "dev",
            "--render",
            str(rendered),
            "--phases",
            "deployment",
            "--pool",
            "nope",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert (validate.returncode, validate.stdout) == (2, "")
    assert validate.stderr.startswith("eks-gpu-platform-validate: --pool: 'nope' is not a GPU pool")
    (tmp_path / "kubeconfig.json").write_text("{}")
    validate = subprocess.run(
        [
            str(env_dir / "bin" / "eks-gpu-platform-validate"),
            "--stack",
            "dev",
            "--render",
            str(rendered),
            "--phases",
            "deployment",
            "--kubeconfig",
            str(tmp_path / "kubeconfig.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert (validate.returncode, validate.stderr) == (
        2,
        "eks-gpu-platform-validate: the validation needs the Kubernetes client (No module named "
        "'kubernetes'): pip install 'eks-gpu-platform[validate]' (or -r requirements.txt)\n",
    )


def test_the_pack_runs_over_a_render_of_the_consumer_example() -> None:
    """``eks_gpu_platform.policies.offline`` itself, over the consumer's recorded resources."""
    project = REPO / "examples" / "consumer"
    recording = render(project, load_stack_file(project, "dev", None))
    assert evaluate(recording.resources) == []
    broken = [
        dataclasses.replace(r, inputs={**r.inputs, "sqsManagedSseEnabled": False})
        if r.type == "aws:sqs/queue:Queue"
        else r
        for r in recording.resources
    ]
    (queue,) = [r.name for r in recording.resources if r.type == "aws:sqs/queue:Queue"]
    assert report(evaluate(broken)) == (
        [
            f"mandatory sqs-queue-encrypted: {queue}: the queue is not encrypted at rest: set "
            "sqsManagedSseEnabled to true, or kmsMasterKeyId to a KMS key"
        ],
        True,
    )


def test_requirements_pin_pulumi_policy_for_the_crossguard_pack() -> None:
    """``pulumi preview --policy-pack policies`` runs in the program's .venv, which
    ``requirements.txt`` fills (policies/PulumiPolicy.yaml: ``virtualenv: ../.venv``)."""
    pack = YAML(typ="safe").load((REPO / "policies" / "PulumiPolicy.yaml").read_text())
    assert pack["runtime"]["options"]["virtualenv"] == "../.venv"

    def pins(path: Path) -> list[str]:
        return [line for line in path.read_text().splitlines() if line.startswith("pulumi-policy")]

    assert pins(REPO / "requirements.txt") == ["pulumi-policy==1.21.0"]
    assert pins(REPO / "policies" / "requirements.txt") == ["pulumi-policy==1.21.0"]
    assert pins(REPO / "requirements-dev.txt") == []
    assert importlib.metadata.version("pulumi-policy") == "1.21.0"
    assert sorted(p.name for p in (REPO / "policies").iterdir() if p.name != "__pycache__") == [
        "PulumiPolicy.yaml",
        "__main__.py",
        "requirements.txt",
    ]
    for workflow in sorted((REPO / ".github" / "workflows").glob("*.yml")):
        assert "policies/requirements.txt" not in workflow.read_text(), workflow.name


def test_project_file_declares_only_config_types_pulumi_accepts() -> None:
    project = YAML(typ="safe").load((REPO / "Pulumi.yaml").read_text())
    assert project["name"] == "eks-gpu-platform"
    assert project["runtime"] == {
        "name": "python",
        "options": {"toolchain": "pip", "virtualenv": ".venv"},
    }
    for key, declaration in (project.get("config") or {}).items():
        if isinstance(declaration, dict) and "type" in declaration:
            assert declaration["type"] in ("string", "integer", "boolean", "array"), key
