"""Every manifest the tests build passes the upstream Karpenter v1.15.0 CRDs (schema and CEL);
broken ones fail with the CRD's exact message.
"""

import copy

import pytest
from crd_validation import validate

from .pools import MANIFESTS, req

# --- every built manifest passes the CRDs; broken ones do not ----------------------------------


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_every_built_manifest_passes_the_crds(name):
    assert validate(MANIFESTS[name]()) == []


def _labels(m: dict) -> dict:
    return m["spec"]["template"]["metadata"]["labels"]


BROKEN = [
    (
        "nodepool-label-karpenter-nodepool",
        "spot/NodePool",
        lambda m: _labels(m).update({"karpenter.sh/nodepool": "gpu-spot"}),
        ['spec.template.metadata.labels: label "karpenter.sh/nodepool" is restricted'],
    ),
    (
        "requirement-instance-pods",
        "spot/NodePool",
        lambda m: m["spec"]["template"]["spec"]["requirements"].append(
            req("karpenter.k8s.aws/instance-pods", "10", operator="Gt")
        ),
        ['spec.template.spec.requirements[6].key: label domain "karpenter.k8s.aws" is restricted'],
    ),
    (
        "gt-with-two-values",
        "spot/NodePool",
        lambda m: m["spec"]["template"]["spec"]["requirements"].append(
            req("karpenter.k8s.aws/instance-gpu-count", "1", "2", operator="Gt")
        ),
        [
            "spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' "
            "must have a single positive integer value"
        ],
    ),
    (
        "budget-schedule-without-duration",
        "on-demand/NodePool",
        lambda m: m["spec"]["disruption"]["budgets"].append({"nodes": "0", "schedule": "@daily"}),
        ["spec.disruption.budgets: 'schedule' must be set with 'duration'"],
    ),
    (
        "weight-0",
        "spot/NodePool",
        lambda m: m["spec"].update({"weight": 0}),
        ["spec.weight: 0 is less than the minimum of 1"],
    ),
    (
        "hop-limit-0",
        "spot/EC2NodeClass",
        lambda m: m["spec"]["metadataOptions"].update({"httpPutResponseHopLimit": 0}),
        ["spec.metadataOptions.httpPutResponseHopLimit: 0 is less than the minimum of 1"],
    ),
    (
        "two-root-volumes",
        "bottlerocket/EC2NodeClass",
        lambda m: m["spec"]["blockDeviceMappings"][0].update({"rootVolume": True}),
        ["spec.blockDeviceMappings: must have only one blockDeviceMappings with rootVolume"],
    ),
    (
        "amifamily-mismatch",
        "spot/EC2NodeClass",
        lambda m: m["spec"].update({"amiFamily": "Bottlerocket"}),
        ["spec: if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"],
    ),
    (
        "no-primary-interface",
        "efa-p5/EC2NodeClass",
        lambda m: m["spec"].update({"networkInterfaces": m["spec"]["networkInterfaces"][1:]}),
        [
            "spec.networkInterfaces: networkInterfaces must include a primary interface with "
            "interfaceType='interface'"
        ],
    ),
    (
        "two-efa-only-on-a-card",
        "efa-p5/EC2NodeClass",
        lambda m: m["spec"]["networkInterfaces"].append(
            {"networkCardIndex": 0, "deviceIndex": 2, "interfaceType": "efa-only"}
        ),
        [
            "spec.networkInterfaces: networkInterfaces must not have duplicate networkCardIndex "
            "and deviceIndex pairs, and can have at most one efa device per network card"
        ],
    ),
    (
        "placement-group-name-and-id",
        "efa-p5/EC2NodeClass",
        lambda m: m["spec"]["placementGroupSelector"].update({"id": "pg-0123"}),
        ["spec.placementGroupSelector: 'name' and 'id' are mutually exclusive"],
    ),
    (
        "reservation-id-with-owner",
        "reserved/EC2NodeClass",
        lambda m: m["spec"].update(
            {"capacityReservationSelectorTerms": [{"id": "cr-0123", "ownerID": "111122223333"}]}
        ),
        [
            "spec.capacityReservationSelectorTerms: 'id' is mutually exclusive, cannot be set "
            "along with other fields in a capacity reservation selector term"
        ],
    ),
    (
        "restricted-tag",
        "spot/EC2NodeClass",
        lambda m: m["spec"]["tags"].update({"karpenter.sh/nodepool": "gpu-spot"}),
        ["spec.tags: tag contains a restricted tag matching karpenter.sh/nodepool"],
    ),
    (
        "role-and-instance-profile",
        "spot/EC2NodeClass",
        lambda m: m["spec"].update({"instanceProfile": "profile"}),
        ["spec: must specify exactly one of ['role', 'instanceProfile']"],
    ),
]


@pytest.mark.parametrize(
    ("base", "mutate", "errors"),
    [case[1:] for case in BROKEN],
    ids=[case[0] for case in BROKEN],
)
def test_the_validator_catches_broken_manifests(base, mutate, errors):
    manifest = copy.deepcopy(MANIFESTS[base]())
    mutate(manifest)
    assert validate(manifest) == errors
