"""Issue 13, item 6: a stack with its own ``cluster.labelDomain`` passes the pack with no extra
step. The platform annotates its NodePools with the domain when it is not the default
(``LABEL_DOMAIN_ANNOTATION``); the label rules read it (``_kube.label_domain``), in the render and
in the engine alike, and still catch every violation under that domain."""

import copy
import json
from pathlib import Path

import pytest
from policy_baselines import DOMAIN, NODEPOOL, compliant_stack, gpu_nodepool, props_of

from eks_gpu_platform.config import DEFAULT_LABEL_DOMAIN, LABEL_DOMAIN_ANNOTATION, PlatformConfig
from eks_gpu_platform.nodepool.manifests import nodepool_manifest
from eks_gpu_platform.policies.offline import evaluate
from eks_gpu_platform.policies.rules import RULES_BY_NAME, StackResource

CUSTOM = "ml.example.com"
LABEL_RULES = (
    "gpu-nodepool-taint-and-pool-label",
    "spot-only-on-preemptible-pools",
    "non-preemptible-consolidate-when-empty",
    "nodepool-gpu-limit-within-queue-capacity",
)


def redomain(value, annotate: bool = True):
    """``value`` with every ``eks-gpu-platform.io/`` key moved to ``ml.example.com/``, and each
    NodePool annotated as the platform annotates it."""
    text = json.dumps(value).replace(f'"{DOMAIN}/', f'"{CUSTOM}/')
    out = json.loads(text)
    if annotate and isinstance(out, dict) and out.get("kind") == "NodePool":
        out["metadata"].setdefault("annotations", {})[LABEL_DOMAIN_ANNOTATION] = CUSTOM
    return out


def custom_stack(annotate: bool = True) -> list[StackResource]:
    return [r._replace(props=redomain(dict(r.props), annotate)) for r in compliant_stack()]


def entries(stack: list[StackResource]) -> list[dict]:
    return [{"type": r.type, "name": r.name, "urn": r.urn, "inputs": r.props} for r in stack]


def test_the_annotation_key_is_fixed():
    assert LABEL_DOMAIN_ANNOTATION == "eks-gpu-platform.io/label-domain"
    assert DEFAULT_LABEL_DOMAIN == DOMAIN


def test_a_custom_domain_stack_passes_with_the_default_pack_config():
    assert evaluate(entries(custom_stack())) == []


def test_without_the_annotation_the_labels_are_looked_for_in_the_configured_domain():
    found = {v.policy for v in evaluate(entries(custom_stack(annotate=False)))}
    # The queue rule finds no pools and no routes under the default domain: nothing to compare.
    assert found == set(LABEL_RULES[:3])


MUTATIONS = [
    pytest.param(
        "platform-pool-train-spot",
        lambda p: p["spec"]["template"]["metadata"]["labels"].pop(f"{CUSTOM}/pool"),
        "gpu-nodepool-taint-and-pool-label",
        f'NodePool "train-spot" has no "{CUSTOM}/pool" label in spec.template.metadata.labels; '
        "workloads and queues cannot target the pool before it has nodes",
        id="pool-label-removed",
    ),
    pytest.param(
        "platform-pool-train-spot",
        lambda p: p["spec"]["template"]["metadata"]["labels"].update(
            {f"{CUSTOM}/preemptible": "false"}
        ),
        "spot-only-on-preemptible-pools",
        f'NodePool "train-spot" allows spot capacity but its "{CUSTOM}/preemptible" label is '
        '"false", not "true"; non-preemptible work must not run where AWS reclaims nodes with '
        "two minutes' notice",
        id="spot-pool-not-preemptible",
    ),
    pytest.param(
        "platform-pool-train-efa-p5-48xlarge",
        lambda p: p["spec"]["disruption"].update(consolidationPolicy="WhenEmptyOrUnderutilized"),
        "non-preemptible-consolidate-when-empty",
        f'NodePool "train-efa-p5-48xlarge" is not preemptible ("{CUSTOM}/preemptible" is '
        '"false") but its consolidationPolicy is "WhenEmptyOrUnderutilized"; use "WhenEmpty" so '
        "Karpenter never evicts running pods to repack nodes",
        id="stable-pool-consolidates-underutilized",
    ),
    pytest.param(
        "platform-queue-vision",
        lambda p: p["metadata"]["annotations"].update({f"{CUSTOM}/node-pools": "train-efaa"}),
        "nodepool-gpu-limit-within-queue-capacity",
        None,
        id="queue-routed-to-an-unknown-pool",
    ),
]


@pytest.mark.parametrize(("name", "mutate", "policy", "message"), MUTATIONS)
def test_violations_are_caught_under_the_custom_domain(name, mutate, policy, message):
    stack = custom_stack()
    mutate(props_of(stack, name))
    found = [v for v in evaluate(entries(stack)) if v.policy == policy]
    assert found, policy
    if message is not None:
        assert [v.message for v in found] == [message]
    else:
        assert any(f"({CUSTOM}/node-pools)" in v.message for v in found)


def test_a_wrong_annotation_is_not_a_way_out():
    """The annotation names the domain; it cannot make a pool without platform labels pass."""
    props = redomain(gpu_nodepool())
    props["metadata"]["annotations"][LABEL_DOMAIN_ANNOTATION] = "other.example.com"
    rule = RULES_BY_NAME["gpu-nodepool-taint-and-pool-label"]
    assert rule.check(NODEPOOL, props, rule.config()) == [
        'NodePool "inference" has no "other.example.com/pool" label in '
        "spec.template.metadata.labels; workloads and queues cannot target the pool before it "
        "has nodes"
    ]


@pytest.mark.parametrize(("domain", "annotated"), [(DOMAIN, False), (CUSTOM, True)])
def test_nodepool_manifest_annotates_only_a_custom_domain(domain, annotated):
    spec = PlatformConfig.load(
        {
            "cluster": {"name": "gpu-test", "labelDomain": domain},
            "nodePools": [{"name": "gpu", "gpus": ["l4"], "limits": {"gpus": 4}}],
        },
        "us-west-2",
    ).node_pools[0]
    manifest = nodepool_manifest(
        spec, name="gpu", node_class="gpu", label_domain=domain, gpu_limit=4
    )
    expected = {"name": "gpu"}
    if annotated:
        expected["annotations"] = {LABEL_DOMAIN_ANNOTATION: CUSTOM}
    assert manifest["metadata"] == expected
    assert manifest["spec"]["template"]["metadata"]["labels"][f"{domain}/pool"] == "gpu"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_shipped_stacks_with_a_custom_label_domain_render_clean(policy_repo_root, tmp_path, stack):
    """The render CLI over the fixture stack with ``cluster.labelDomain`` set: exit 0, and the
    pack (default config) finds nothing the shipped stack does not already show."""
    import contextlib
    import io

    import yaml
    from render_cache import cli_renders
    from stack_files import fixture_stack_path

    from eks_gpu_platform.offline.render import main

    document = yaml.safe_load(fixture_stack_path(stack).read_text())
    custom = copy.deepcopy(document)
    custom["config"]["eks-gpu-platform:cluster"]["labelDomain"] = CUSTOM
    lines = {}
    for name, doc in (("default", document), ("custom", custom)):
        path = Path(tmp_path) / f"Pulumi.{name}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))  # the fixture stack's key order
        out = Path(tmp_path) / name
        with (
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
            cli_renders(),
        ):
            # The fixture stack's own name (the command line's default is dev): the default
            # render is then the one the tests of the fixture stack share (render_cache).
            main(
                [
                    "--stack",
                    stack,
                    "--config-file",
                    str(path),
                    "--project-dir",
                    str(policy_repo_root),
                    "--out",
                    str(out),
                ]
            )
        lines[name] = (out / "policy.txt").read_text()
    assert lines["custom"].replace(CUSTOM, DOMAIN) == lines["default"]
    if stack == "prod":
        assert lines["custom"] == ""
    resources = json.loads((Path(tmp_path) / "custom" / "resources.json").read_text())
    pools = [r for r in resources if r["type"] == NODEPOOL]
    assert pools and all(
        r["inputs"]["metadata"]["annotations"] == {LABEL_DOMAIN_ANNOTATION: CUSTOM} for r in pools
    )
