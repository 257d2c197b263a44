"""The conformance suite's Go module and known-bad renders, checked without Go (issue 20).

``tests/conformance/`` is run by ``make conformance`` (Go, a real kube-apiserver and Karpenter);
these tests keep what the regular suite can check of it exact: the module pins the upstream
versions README names and replaces nothing with a local copy, the shared loader package exists,
the committed unscoped policies are the pre-issue-19 form, and each mutation of ``mutate.py``
changes exactly what its name says.
"""

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "tests" / "conformance"


def _mutate():
    spec = importlib.util.spec_from_file_location("conformance_mutate", CONF / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _requires(gomod: str) -> dict[str, str]:
    out = {}
    for block in re.findall(r"^require \((.*?)^\)", gomod, flags=re.S | re.M):
        for line in block.strip().splitlines():
            module, version = line.split("//")[0].split()
            out[module] = version
    return out


def test_go_mod_pins_the_upstream_versions():
    gomod = (CONF / "go.mod").read_text()
    # Karpenter 1.15 needs go >= 1.26.9 (issue 31): the toolchain is the Makefile's GO_TOOLCHAIN.
    assert gomod.splitlines()[:3] == ["module eks-gpu-platform.local/conformance", "", "go 1.26.9"]
    requires = _requires(gomod)
    assert {
        m: requires[m] for m in ("github.com/aws/karpenter-provider-aws", "sigs.k8s.io/karpenter")
    } == {
        # Not the provider's v1.15.1: it requires the core's v1.15.1, which the proxy refuses
        # (probe.py); its provider code is v1.15.0's.
        "github.com/aws/karpenter-provider-aws": "v1.15.0",
        "sigs.k8s.io/karpenter": "v1.15.0",
    }
    assert requires["sigs.k8s.io/controller-runtime"] == "v0.24.1"
    # Karpenter's AWS provider v1.15.0 pins the k8s.io libraries at v0.37.0; one version for all.
    k8s = {
        m: v
        for m, v in requires.items()
        if m in ("k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go")
    }
    assert k8s == {
        "k8s.io/api": "v0.37.0",
        "k8s.io/apimachinery": "v0.37.0",
        "k8s.io/client-go": "v0.37.0",
    }


def test_every_go_command_runs_the_pinned_toolchain():
    """Karpenter 1.15's modules need a newer Go than 1.26.8 (issue 31): the Makefile, the probe,
    the mutation score and CI's entry point all name go1.27.3, and nothing keeps
    GOTOOLCHAIN=local (which would refuse the suite's go.mod at once)."""
    makefile = (REPO / "Makefile").read_text()
    assert "\nGO_TOOLCHAIN := go1.27.3\n" in makefile
    assert "\nGO_ENV := GOTOOLCHAIN=$(GO_TOOLCHAIN) CGO_ENABLED=0\n" in makefile
    assert "\tGOTOOLCHAIN=$(GO_TOOLCHAIN) python3 $(CONF)/probe.py\n" in makefile
    assert 'GO_TOOLCHAIN = "go1.27.3"' in (CONF / "probe.py").read_text()
    assert '"GOTOOLCHAIN": "go1.27.3"' in (CONF / "mutation_score.py").read_text()
    assert "\nexport GOTOOLCHAIN=go1.27.3\ngo version\n" in (REPO / ".ci" / "run").read_text()
    for path in (
        REPO / "Makefile",
        CONF / "probe.py",
        CONF / "mutation_score.py",
        REPO / ".ci" / "run",
    ):
        text = path.read_text()
        assert "GOTOOLCHAIN=local" not in text and '"GOTOOLCHAIN": "local"' not in text, path


def test_go_mod_replaces_nothing():
    for gomod in CONF.rglob("go.mod"):
        text = gomod.read_text()
        local = re.findall(
            r"^\s*(?:replace\s+)?\S+(?:\s+\S+)?\s+=>\s+(\.\.?/\S*|/\S*)", text, flags=re.M
        )
        assert local == [], (
            f"{gomod.relative_to(REPO)} replaces a module with a local copy: {local}"
        )
    # One replace, between two published versions of the same module: the provider v1.15.0
    # requires timestreamwrite v1.43.1, whose zip the proxy refuses (403, 2026-11-27); v1.43.0
    # is served (the provider only names the client's WriteRecords in pkg/aws/sdk.go).
    replaces = [
        line.strip()
        for line in (CONF / "go.mod").read_text().splitlines()
        if line.startswith("replace")
    ]
    assert replaces == [
        "replace github.com/aws/aws-sdk-go-v2/service/timestreamwrite v1.43.1 => "
        "github.com/aws/aws-sdk-go-v2/service/timestreamwrite v1.43.0"
    ]


def test_go_sum_is_committed_beside_go_mod():
    assert (CONF / "go.sum").stat().st_size > 0


def test_shared_loader_and_packages_exist():
    assert sorted(p.name for p in (CONF / "internal" / "render").glob("*.go")) == [
        "env.go",
        "render.go",
        "render_test.go",
    ]
    assert (CONF / "apiserver" / "main_test.go").is_file()


def test_unscoped_testdata_is_the_pre_fix_form():
    """The known-bad policies: the pod policy keys on priority in every namespace, the workloads
    policy covers ReplicaSets, and no binding has a namespaceSelector (issue 19's defect)."""
    root = CONF / "testdata" / "admission-unscoped"
    for form, kind in (
        ("mutate", "MutatingAdmissionPolicy"),
        ("validate", "ValidatingAdmissionPolicy"),
    ):
        docs = {p.name: yaml.safe_load(p.read_text()) for p in sorted((root / form).glob("*.yaml"))}
        prefix = kind.lower()
        assert sorted(docs) == [
            f"{prefix}-kai-non-preemptible-do-not-disrupt-workloads.yaml",
            f"{prefix}-kai-non-preemptible-do-not-disrupt.yaml",
            f"{prefix}binding-kai-non-preemptible-do-not-disrupt-workloads.yaml",
            f"{prefix}binding-kai-non-preemptible-do-not-disrupt.yaml",
        ]
        pod = docs[f"{prefix}-kai-non-preemptible-do-not-disrupt.yaml"]
        assert "object.spec.priority >= 100" in pod["spec"]["matchConditions"][0]["expression"]
        assert "schedulerName" not in json.dumps(pod)
        workloads = docs[f"{prefix}-kai-non-preemptible-do-not-disrupt-workloads.yaml"]
        assert workloads["spec"]["matchConstraints"]["resourceRules"][0]["resources"] == [
            "deployments",
            "statefulsets",
            "replicasets",
        ]
        for name in (
            "kai-non-preemptible-do-not-disrupt",
            "kai-non-preemptible-do-not-disrupt-workloads",
        ):
            binding = docs[f"{prefix}binding-{name}.yaml"]
            assert "matchResources" not in binding["spec"]
            assert binding["spec"]["policyName"] == name


TEMPLATE = """# pod-security: restricted
# A template.
---
apiVersion: v1
kind: Namespace
metadata:
  name: q1
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: script
  namespace: q1
data:
  train.py: |
    import os
    print(os.environ)
"""

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "general"},
    "spec": {"template": {"spec": {"expireAfter": "168h", "requirements": []}}},
}


@pytest.fixture
def renders(tmp_path):
    for stack, policy in (
        ("dev", "MutatingAdmissionPolicy"),
        ("dev-1.35", "ValidatingAdmissionPolicy"),
    ):
        manifests = tmp_path / "renders" / stack / "manifests"
        manifests.mkdir(parents=True)
        (manifests / "nodepool-general.yaml").write_text(yaml.safe_dump(NODEPOOL, sort_keys=False))
        (manifests / f"{policy.lower()}-scoped.yaml").write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "admissionregistration.k8s.io/v1",
                    "kind": policy,
                    "metadata": {"name": "s"},
                }
            )
        )
        (manifests / "namespace-q2.yaml").write_text(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: q2\n"
        )
        examples = tmp_path / "renders" / stack / "examples"
        examples.mkdir()
        (examples / "training-q1.yaml").write_text(TEMPLATE)
    return tmp_path


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_mutations_change_exactly_what_they_name(renders):
    out = renders / "bad"
    # The synthetic renders have no GPU pool: the Karpenter mutations (karpenter_mutations.py,
    # tested in tests/test_conformance_karpenter_mutations.py) do not apply to them.
    only = "admission-unscoped,psa-privileged,nodepool-invalid"
    assert _mutate().main([str(renders / "renders"), str(out), "--mutations", only]) == 0
    assert json.loads((out / "mutations.json").read_text()) == {
        "admission-unscoped": ["dev", "dev-1.35"],
        "psa-privileged": ["dev", "dev-1.35"],
        "nodepool-invalid": ["dev", "dev-1.35"],
    }
    for stack, form in (("dev", "mutate"), ("dev-1.35", "validate")):
        good = _tree(renders / "renders" / stack)

        unscoped = _tree(out / "admission-unscoped" / stack)
        testdata = CONF / "testdata" / "admission-unscoped" / form
        expected = {k: v for k, v in good.items() if "admissionpolicy" not in k}
        expected.update({f"manifests/{p.name}": p.read_text() for p in testdata.glob("*.yaml")})
        assert unscoped == expected

        privileged = _tree(out / "psa-privileged" / stack)
        assert privileged == {
            **good,
            "examples/training-q1.yaml": TEMPLATE.replace(
                "enforce: restricted", "enforce: privileged"
            ),
        }

        invalid = _tree(out / "nodepool-invalid" / stack)
        assert invalid == {
            **good,
            "manifests/nodepool-general.yaml": good["manifests/nodepool-general.yaml"].replace(
                "expireAfter: 168h", "expireAfter: 30d"
            ),
        }


def test_mutate_refuses_missing_renders(tmp_path, capsys):
    assert _mutate().main([str(tmp_path), str(tmp_path / "bad"), "--stacks", "prod"]) == 2
    assert capsys.readouterr().err == f"mutate: no render of prod under {tmp_path}\n"


def test_tenancy_open_makes_every_pod_rule_true(renders):
    """``tenancy-open`` changes only the validations of ``platform-tenant-pods``."""
    manifests = renders / "renders" / "dev" / "manifests"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "platform-tenant-pods"},
        "spec": {"validations": [{"expression": "a", "message": "m"}, {"expression": "b"}]},
    }
    (manifests / "validatingadmissionpolicy-platform-tenant-pods.yaml").write_text(
        yaml.safe_dump(policy, sort_keys=False)
    )
    out = renders / "bad"
    assert _mutate().main([str(renders / "renders"), str(out), "--mutations", "tenancy-open"]) == 0
    assert json.loads((out / "mutations.json").read_text()) == {"tenancy-open": ["dev"]}
    good = _tree(renders / "renders" / "dev")
    changed = _tree(out / "tenancy-open" / "dev")
    name = "manifests/validatingadmissionpolicy-platform-tenant-pods.yaml"
    assert {k: v for k, v in changed.items() if k != name} == {
        k: v for k, v in good.items() if k != name
    }
    assert yaml.safe_load(changed[name])["spec"]["validations"] == [
        {"expression": "true", "message": "m"},
        {"expression": "true"},
    ]
