"""Hostile stack files through the render CLI (issue 13): duplicate keys refused with the key's
path and lines, non-finite numbers and problems in several sections named in one run; always
exit 2, no traceback, nothing written. And the strict YAML loader on its own."""

import contextlib
import io
from pathlib import Path

import pytest
import yaml

from eks_gpu_platform.offline import yaml_strict
from eks_gpu_platform.offline.render import main

REPO = Path(__file__).resolve().parents[2]


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


# --- duplicate keys ------------------------------------------------------------------------------

DUPLICATES = [
    pytest.param(
        "a: 1\nb: 2\na: 3\n",
        [
            "a: defined twice, at lines 1 and 3; YAML keeps only the last one and the Pulumi CLI "
            "refuses the file: remove one"
        ],
        id="top-level",
    ),
    pytest.param(
        "config:\n  x:nodePools:\n    - name: a\n  x:nodePools: []\n",
        [
            "config.x:nodePools: defined twice, at lines 2 and 4; YAML keeps only the last one and "
            "the Pulumi CLI refuses the file: remove one"
        ],
        id="a-whole-block",
    ),
    pytest.param(
        "l:\n  - name: a\n    kind: gpu\n    kind: cpu\n  - name: b\n    name: c\n",
        [
            "l[0].kind: defined twice, at lines 3 and 4; YAML keeps only the last one and the "
            "Pulumi CLI refuses the file: remove one",
            "l[1].name: defined twice, at lines 5 and 6; YAML keeps only the last one and the "
            "Pulumi CLI refuses the file: remove one",
        ],
        id="inside-list-items",
    ),
    pytest.param(
        "m: {a: 1, b: 2, a: 3, b: 4, a: 5}\n",
        [
            "m.a: defined twice, at lines 1 and 1; YAML keeps only the last one and the Pulumi "
            "CLI refuses the file: remove one",
            "m.b: defined twice, at lines 1 and 1; YAML keeps only the last one and the Pulumi "
            "CLI refuses the file: remove one",
            "m.a: defined twice, at lines 1 and 1; YAML keeps only the last one and the Pulumi "
            "CLI refuses the file: remove one",
        ],
        id="flow-mapping-every-repeat",
    ),
    pytest.param(
        # yaml.v3 compares the key's text: 1 and "1" are the same key there.
        "1: a\n'1': b\n",
        [
            "1: defined twice, at lines 1 and 2; YAML keeps only the last one and the Pulumi CLI "
            "refuses the file: remove one"
        ],
        id="same-text-different-tag",
    ),
]


@pytest.mark.parametrize(("text", "lines"), DUPLICATES)
def test_duplicate_keys_are_refused(text, lines):
    with pytest.raises(yaml_strict.DuplicateKeyError) as err:
        yaml_strict.load(text)
    assert err.value.lines == lines


CLEAN = [
    pytest.param("a: 1\nb: {a: 2}\n", {"a": 1, "b": {"a": 2}}, id="same-key-in-other-mappings"),
    pytest.param("- {a: 1}\n- {a: 2}\n", [{"a": 1}, {"a": 2}], id="same-key-in-list-items"),
    pytest.param(
        "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\nagain: *b\n",
        {"base": {"x": 1}, "use": {"x": 1, "y": 2}, "again": {"x": 1}},
        id="anchors-and-merge",
    ),
    pytest.param("", None, id="empty"),
]


@pytest.mark.parametrize(("text", "value"), CLEAN)
def test_documents_without_duplicates_load_as_safe_load_does(text, value):
    assert yaml_strict.load(text) == value == yaml.safe_load(text)


def test_not_yaml_is_still_a_yaml_error():
    with pytest.raises(yaml.YAMLError):
        yaml_strict.load("a: [1\n")


# --- the render CLI ------------------------------------------------------------------------------

HOSTILE = [
    pytest.param(
        "config:\n"
        "  aws:region: us-west-2\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: gpu-dev\n"
        "  eks-gpu-platform:nodePools:\n"
        "    - name: gpu\n"
        "      gpus: [l4]\n"
        "      limits: {gpus: 8}\n"
        "  eks-gpu-platform:nodePools: []\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: other\n",
        [
            "error: {path} repeats keys:",
            "  config.eks-gpu-platform:nodePools: defined twice, at lines 5 and 9; YAML keeps "
            "only the last one and the Pulumi CLI refuses the file: remove one",
            "  config.eks-gpu-platform:cluster: defined twice, at lines 3 and 10; YAML keeps only "
            "the last one and the Pulumi CLI refuses the file: remove one",
        ],
        id="duplicate-sections",
    ),
    pytest.param(
        "config:\n"
        "  aws:region: 5\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: gpu-dev\n"
        "    kubernetesVersion: '1.99'\n"
        "  eks-gpu-platform:nodePools:\n"
        "    - name: gpu\n"
        "      gpus: [l4]\n"
        "      capacityTypes: [spot]\n"
        "      rootVolume: {sizeGib: 5}\n"
        "  eks-gpu-platform:scheduler:\n"
        "    queues:\n"
        "      - name: team\n"
        "        nodePools: [gpu]\n"
        "        gpu: {quota: .nan, limit: .inf, overQuotaWeight: 1}\n"
        "        cpu: {quota: 1, limit: 2, overQuotaWeight: -.inf}\n"
        "        memory: {quota: 1, limit: 2, overQuotaWeight: 1}\n"
        "  eks-gpu-platform:tags:\n"
        "    'aws:owner': me\n",
        [
            "invalid stack configuration:",
            "  aws:region: 5 is not an AWS region such as 'us-west-2'",
            "  cluster.kubernetesVersion: '1.99' is not supported; expected one of 1.30, 1.31, "
            "1.32, 1.33, 1.34, 1.35, 1.36",
            "  nodePools[0](gpu).rootVolume.sizeGib: 5 is out of range; expected a number from "
            "20 to 16384",
            "  nodePools[0](gpu).capacityTypes: includes 'spot' but the pool is not preemptible; "
            "spot reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
            "  scheduler.queues[0](team).gpu.quota: nan is not a finite number; expected a number "
            "such as 1 or 0.5",
            "  scheduler.queues[0](team).gpu.limit: inf is not a finite number; expected a number "
            "such as 1 or 0.5",
            "  scheduler.queues[0](team).cpu.overQuotaWeight: -inf is not a finite number; "
            "expected a number such as 1 or 0.5",
            "  tags: 'aws:owner' is not a valid tag key; expected 1-128 letters, digits, spaces "
            "or _.:/=+-@, not starting with 'aws:'",
        ],
        id="problems-in-every-section",
    ),
]


@pytest.mark.parametrize(("text", "lines"), HOSTILE)
def test_hostile_stack_file_exits_2_naming_every_problem(tmp_path, text, lines):
    stack = tmp_path / "Pulumi.hostile.yaml"
    stack.write_text(text)
    out = tmp_path / "out"
    code, stdout, stderr = run_main(
        "--stack",
        "hostile",
        "--config-file",
        str(stack),
        "--project-dir",
        str(REPO),
        "--out",
        str(out),
    )
    assert (code, stdout) == (2, "")
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [line.replace("{path}", str(stack)) for line in lines]
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["Pulumi.hostile.yaml"]
