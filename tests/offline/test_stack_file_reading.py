"""Stack files read as the Pulumi CLI reads them (issue 23, points 2 and 3).

- A key whose namespace is neither the project's nor one a provider or the engine reads (aws,
  eks, kubernetes, pulumi) reaches nothing: ``eks-gpu-platfrom:vpc`` rendered the default VPC
  before. It is a configuration error now, with a did-you-mean, among every other problem.
- Booleans are YAML 1.2's (yaml.v3): ``yes``/``no``/``on``/``off`` are strings, so
  ``endpointPublicAccess: yes`` (read as true before) is refused with the key, the value and
  "use true or false".

Expected values are written out here; upstream sources are cited in
``components/offline/yaml_strict.py`` and ``components/config_load.py`` (``PROVIDER_NAMESPACES``).
"""

import contextlib
import io
from pathlib import Path

import pytest
import yaml

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline import yaml_strict
from eks_gpu_platform.offline.render import load_stack_file, main
from eks_gpu_platform.platform import read_stack_config
from eks_gpu_platform.spec import SpecError

REPO = Path(__file__).resolve().parents[2]
CLUSTER = {"name": "gpu-test", "admins": ["role/PlatformAdmin"]}
ALLOWED = "allowed namespaces are eks-gpu-platform (this program) and aws, eks, kubernetes, pulumi"


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def render_text(tmp_path: Path, text: str) -> tuple[int, str, str, Path]:
    stack = tmp_path / "Pulumi.typo.yaml"
    stack.write_text(text)
    out = tmp_path / "out"
    code, stdout, stderr = run_main(
        *("--stack", "typo", "--config-file", str(stack)),
        *("--project-dir", str(REPO), "--out", str(out)),
    )
    return code, stdout, stderr, out


# --- point 2: namespaces -------------------------------------------------------------------------


def test_a_misspelt_project_namespace_is_refused_with_every_other_problem(tmp_path):
    text = (
        "config:\n"
        "  aws:region: us-west-2\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: gpu-test\n"
        "    admins: [role/PlatformAdmin]\n"
        "    endpointPublicAccess: yes\n"
        "  eks-gpu-platfrom:vpc:\n"
        "    cidr: 10.40.0.0/16\n"
        "  kubernets:context: prod\n"
        "  acme:owner: ml-team\n"
        "  aws:profile: deploy\n"
        "  eks:anything: 1\n"
        "  kubernetes:context: prod\n"
        "  pulumi:disable-default-providers: '[]'\n"
    )
    code, stdout, stderr, out = render_text(tmp_path, text)
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        "invalid stack configuration:",
        "  eks-gpu-platfrom:vpc: unknown configuration namespace 'eks-gpu-platfrom', which "
        f"nothing reads; did you mean 'eks-gpu-platform'?; {ALLOWED} (its providers and the "
        "engine)",
        "  kubernets:context: unknown configuration namespace 'kubernets', which nothing reads; "
        f"did you mean 'kubernetes'?; {ALLOWED} (its providers and the engine)",
        "  acme:owner: unknown configuration namespace 'acme', which nothing reads; "
        f"{ALLOWED} (its providers and the engine)",
        "  cluster.endpointPublicAccess: 'yes' is not a boolean (the Pulumi CLI reads YAML 1.1's "
        "yes, no, on and off as strings); use true or false",
    ]
    assert not out.exists()


def test_platform_config_load_checks_the_namespaces_of_the_stack_keys():
    keys = ["aws:region", "eks-gpu-platform:cluster", "eks-gpu-platfom:nodePools", "pulumi:tags"]
    with pytest.raises(SpecError) as err:
        PlatformConfig.load({"cluster": CLUSTER}, "us-west-2", keys)
    assert err.value.lines == [
        "eks-gpu-platfom:nodePools: unknown configuration namespace 'eks-gpu-platfom', which "
        f"nothing reads; did you mean 'eks-gpu-platform'?; {ALLOWED} (its providers and the "
        "engine)"
    ]
    # Without the stack's keys (a program that passes values in code) nothing is checked.
    assert PlatformConfig.load({"cluster": CLUSTER}, "us-west-2").cluster.name == "gpu-test"


def test_the_program_refuses_an_unknown_namespace_too(run_program):
    """``pulumi up`` runs ``__main__.py``, which reads the configuration with
    ``read_stack_config``: the engine hands it every key of the stack file."""
    config = {
        "aws:region": "us-west-2",
        "eks-gpu-platform:cluster": CLUSTER,
        "eks-gpu-platfrom:vpc": {"cidr": "10.40.0.0/16"},
    }
    found: list[SpecError] = []

    def program():
        try:
            read_stack_config()
        except SpecError as err:
            found.append(err)

    run_program(program, config=config)
    assert [e.lines for e in found] == [
        [
            "eks-gpu-platfrom:vpc: unknown configuration namespace 'eks-gpu-platfrom', which "
            f"nothing reads; did you mean 'eks-gpu-platform'?; {ALLOWED} (its providers and the "
            "engine)"
        ]
    ]


# --- point 3: YAML 1.2 booleans ------------------------------------------------------------------

BOOLEANS = (
    "a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: Yes\nh: OFF\n"
    "i: true\nj: True\nk: TRUE\nl: false\nm: False\nn: FALSE\no: 'true'\np: [yes, true]\n"
)
EXPECTED = {
    "a": "yes",
    "b": "no",
    "c": "on",
    "d": "off",
    "e": "y",
    "f": "n",
    "g": "Yes",
    "h": "OFF",
    "i": True,
    "j": True,
    "k": True,
    "l": False,
    "m": False,
    "n": False,
    "o": "true",
    "p": ["yes", True],
}


def test_the_strict_loader_reads_booleans_as_yaml_1_2():
    assert yaml_strict.load(BOOLEANS) == EXPECTED
    # PyYAML alone (YAML 1.1) made booleans of the words: what the render read before.
    assert yaml.safe_load("a: yes\nb: off\n") == {"a": True, "b": False}


def test_the_pure_python_loader_agrees():
    assert yaml_strict._load(BOOLEANS, yaml_strict._SAFE_LOADER) == EXPECTED


def test_an_object_value_keeps_yes_as_a_string(tmp_path):
    """The CLI hands the program an object config value as JSON text in which ``yes`` is the
    string "yes"; the render's stack file reader gives the same value."""
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(
        "config:\n  aws:region: us-west-2\n  eks-gpu-platform:cluster:\n"
        "    name: gpu-test\n    endpointPublicAccess: yes\n    protect: on\n"
    )
    stack = load_stack_file(REPO, "s", path)
    assert stack.config["eks-gpu-platform:cluster"] == {
        "name": "gpu-test",
        "endpointPublicAccess": "yes",
        "protect": "on",
    }


def test_a_yaml_1_1_boolean_is_refused_naming_the_key_and_value(tmp_path):
    text = (
        "config:\n"
        "  aws:region: us-west-2\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: gpu-test\n"
        "    admins: [role/PlatformAdmin]\n"
        "    endpointPublicAccess: no\n"
        "    protect: 1\n"
    )
    code, stdout, stderr, _ = render_text(tmp_path, text)
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        "invalid stack configuration:",
        "  cluster.endpointPublicAccess: 'no' is not a boolean (the Pulumi CLI reads YAML 1.1's "
        "yes, no, on and off as strings); use true or false",
        "  cluster.protect: 1 is not a boolean; use true or false",
    ]
