"""Tests for ``crd_validation``: defaults, schema and CEL rules of the CRDs it validates against."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import crd_validation
import pytest
from crd_validation import (
    all_rules,
    apply_defaults,
    check_compilable,
    find_crd,
    unevaluable_rules,
    validate,
    validate_against_schema,
)

# Rules of the CRDs that cel-python (with this module's extensions) cannot evaluate.
EXPECTED_UNEVALUABLE: dict[str, str] = {}

# Transition rules: they compare with ``oldSelf``, so the API server runs them on updates only.
TRANSITION_RULES = {
    ("nodeclaims.karpenter.sh", "spec", "self == oldSelf"),
    ("nodepools.karpenter.sh", "spec", "has(self.replicas) == has(oldSelf.replicas)"),
    ("nodepools.karpenter.sh", "spec.template.spec.nodeClassRef", "self.group == oldSelf.group"),
    ("nodepools.karpenter.sh", "spec.template.spec.nodeClassRef", "self.kind == oldSelf.kind"),
}

CEL_SKIPPED = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)


def nodepool() -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": "gpu",
                    },
                    "requirements": [
                        {
                            "key": "karpenter.sh/capacity-type",
                            "operator": "In",
                            "values": ["on-demand"],
                        },
                        {
                            "key": "karpenter.k8s.aws/instance-gpu-count",
                            "operator": "Gt",
                            "values": ["0"],
                        },
                    ],
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                },
            },
            "limits": {"cpu": 1000, "nvidia.com/gpu": "64"},
        },
    }


def ec2nodeclass() -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {
            "role": "KarpenterNodeRole-demo",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        },
    }


def nodeoverlay() -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "fuse"},
        "spec": {
            "requirements": [
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": ["p5.48xlarge"],
                }
            ],
            "capacity": {"smarter-devices/fuse": 1},
        },
    }


def queue() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "research"},
        "spec": {
            "parentQueue": "default",
            "priority": 100,
            "resources": {
                "gpu": {"quota": 8, "limit": -1, "overQuotaWeight": 1},
                "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            },
        },
    }


def podgroup() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "job"},
        "spec": {"minMember": 2, "queue": "research", "subGroups": [{"name": "workers"}]},
    }


def mpijob() -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "worker", "image": "nccl-tests"}]}}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "nccl", "namespace": "nccl-tests"},
        "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2, "template": template}}},
    }


def mutated(base: dict[str, Any], mutate: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    obj = copy.deepcopy(base)
    mutate(obj)
    return obj


def schema_of(obj: dict[str, Any]) -> dict[str, Any]:
    crd = find_crd(obj["apiVersion"], obj["kind"])
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def requirements(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["requirements"]


# ----------------------------------------------------------------------------------------------
# Lookup and valid objects
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [nodepool, ec2nodeclass, nodeoverlay, queue, podgroup, mpijob])
def test_minimal_objects_are_valid(build: Callable[[], dict[str, Any]]) -> None:
    assert validate(build()) == []


def test_validate_does_not_mutate_its_input() -> None:
    obj = nodepool()
    validate(obj)
    assert obj == nodepool()


def test_find_crd_by_group_version_kind() -> None:
    assert find_crd("karpenter.sh/v1", "NodePool")["metadata"]["name"] == "nodepools.karpenter.sh"
    with pytest.raises(LookupError):
        find_crd("karpenter.sh/v1beta1", "NodePool")
    with pytest.raises(LookupError):
        validate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_crds_come_from_each_source_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    nodepools = crd_validation.karpenter_crd_files()[0]
    assert nodepools.parent.parent.parent.parent.name == "karpenter-provider-aws@v1.15.0"
    assert [p.name for p in crd_validation.karpenter_crd_files()] == [
        "karpenter.sh_nodepools.yaml",
        "karpenter.sh_nodeclaims.yaml",
        "karpenter.sh_nodeoverlays.yaml",
        "karpenter.k8s.aws_ec2nodeclasses.yaml",
    ]
    assert crd_validation.crd_files()[:4] == crd_validation.karpenter_crd_files()
    assert [p.name for p in crd_validation.crd_files()[4:]] == [
        "kai-scheduler.yaml",
        "mpi-operator.yaml",
    ]
    monkeypatch.setattr(crd_validation, "CRD_SOURCES", (crd_validation.karpenter_crd_files,))
    assert find_crd("karpenter.sh/v1", "NodePool")["metadata"]["name"] == "nodepools.karpenter.sh"
    with pytest.raises(LookupError) as raised:
        validate(queue())
    assert str(raised.value) == "no CRD for Queue in 'scheduling.run.ai/v2' in 4 CRD files"


def test_the_project_schemas_serve_the_kai_and_mpijob_kinds() -> None:
    served = {
        (crd["spec"]["group"], version["name"], crd["spec"]["names"]["kind"], crd["spec"]["scope"])
        for crd in crd_validation._load_crds(crd_validation.facts_crd_files())
        for version in crd["spec"]["versions"]
    }
    assert served == {
        ("scheduling.run.ai", "v2", "Queue", "Cluster"),
        ("scheduling.run.ai", "v2alpha2", "PodGroup", "Namespaced"),
        ("kubeflow.org", "v2beta1", "MPIJob", "Namespaced"),
    }


# ----------------------------------------------------------------------------------------------
# Defaulting
# ----------------------------------------------------------------------------------------------


def test_nodepool_defaults() -> None:
    obj = nodepool()
    defaulted = apply_defaults(schema_of(obj), obj)
    assert defaulted["spec"]["disruption"] == {
        "consolidateAfter": "0s",
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "budgets": [{"nodes": "10%"}],
    }
    assert defaulted["spec"]["template"]["spec"]["expireAfter"] == "720h"
    assert "disruption" not in obj["spec"], "apply_defaults must return a copy"


def test_defaults_apply_inside_array_items_and_replace_nulls() -> None:
    obj = mutated(
        nodepool(),
        lambda o: o["spec"].update(
            {
                "disruption": {"consolidateAfter": "1m", "budgets": [{"reasons": ["Empty"]}]},
                "weight": None,
            }
        ),
    )
    defaulted = apply_defaults(schema_of(obj), obj)
    assert defaulted["spec"]["disruption"]["budgets"] == [{"reasons": ["Empty"], "nodes": "10%"}]
    assert "weight" not in defaulted["spec"]  # non-nullable null without a default is dropped


def test_ec2nodeclass_metadata_options_default() -> None:
    obj = ec2nodeclass()
    assert apply_defaults(schema_of(obj), obj)["spec"]["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }
    partial = mutated(
        obj, lambda o: o["spec"].update({"metadataOptions": {"httpTokens": "optional"}})
    )
    assert apply_defaults(schema_of(obj), partial)["spec"]["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "optional",
    }


def test_a_partial_disruption_gets_consolidate_after_0s() -> None:
    # Karpenter 1.15 gave `consolidateAfter` a default of its own (`0s`) and dropped it from the
    # required properties (v1.15.1 karpenter.sh_nodepools.yaml): a partial `disruption` is valid.
    # (1.14.1 refused it: "'consolidateAfter' is a required property".)
    obj = mutated(
        nodepool(), lambda o: o["spec"].update({"disruption": {"budgets": [{"nodes": "1"}]}})
    )
    assert validate(obj) == []
    assert apply_defaults(schema_of(obj), obj)["spec"]["disruption"]["consolidateAfter"] == "0s"


# ----------------------------------------------------------------------------------------------
# NodePool
# ----------------------------------------------------------------------------------------------

NODEPOOL_CASES = {
    "restricted template label (CEL)": (
        lambda o: o["spec"]["template"]["metadata"]["labels"].update(
            {"karpenter.sh/nodepool": "x"}
        ),
        ['spec.template.metadata.labels: label "karpenter.sh/nodepool" is restricted'],
    ),
    "restricted label domain (CEL)": (
        lambda o: o["spec"]["template"]["metadata"]["labels"].update({"karpenter.sh/custom": "x"}),
        ['spec.template.metadata.labels: label domain "karpenter.sh" is restricted'],
    ),
    "restricted requirement key (CEL)": (
        lambda o: requirements(o).append({"key": "kubernetes.io/hostname", "operator": "Exists"}),
        ['spec.template.spec.requirements[2].key: label "kubernetes.io/hostname" is restricted'],
    ),
    "In with empty values (CEL)": (
        lambda o: requirements(o).append({"key": "team", "operator": "In", "values": []}),
        [
            "spec.template.spec.requirements: "
            "requirements with operator 'In' must have a value defined"
        ],
    ),
    "In without values (CEL evaluation error)": (
        lambda o: requirements(o).append({"key": "team", "operator": "In"}),
        [
            "spec.template.spec.requirements: no such member in mapping: 'values' evaluating rule: "
            "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"
        ],
    ),
    "Gt with two values (CEL)": (
        lambda o: requirements(o).append({"key": "gen", "operator": "Gt", "values": ["1", "2"]}),
        [
            "spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' "
            "must have a single positive integer value"
        ],
    ),
    "Lt with a negative value (CEL)": (
        lambda o: requirements(o).append({"key": "gen", "operator": "Lt", "values": ["-1"]}),
        [
            "spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' "
            "must have a single positive integer value"
        ],
    ),
    "minValues above the number of values (CEL)": (
        lambda o: requirements(o)[0].update({"minValues": 2}),
        [
            "spec.template.spec.requirements: requirements with 'minValues' must have at least "
            "that many values specified in the 'values' field"
        ],
    ),
    "budget schedule without duration (CEL)": (
        lambda o: o["spec"].update(
            {
                "disruption": {
                    "consolidateAfter": "0s",
                    "budgets": [{"nodes": "0", "schedule": "@daily"}],
                }
            }
        ),
        ["spec.disruption.budgets: 'schedule' must be set with 'duration'"],
    ),
    "weight on a static NodePool (CEL)": (
        lambda o: (o["spec"].pop("limits"), o["spec"].update({"replicas": 2, "weight": 10})),
        ["spec: 'weight' is not supported on static NodePools"],
    ),
    "bad expireAfter (schema pattern)": (
        lambda o: o["spec"]["template"]["spec"].update({"expireAfter": "30d"}),
        ["spec.template.spec.expireAfter: '30d' does not match '^(([0-9]+(s|m|h))+|Never)$'"],
    ),
    "weight out of range (schema)": (
        lambda o: o["spec"].update({"weight": 0}),
        ["spec.weight: 0 is less than the minimum of 1"],
    ),
    "bad limit quantity (schema pattern)": (
        lambda o: o["spec"]["limits"].update({"memory": "10 GiB"}),
        [
            "spec.limits.memory: '10 GiB' does not match '^(\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|"
            "(\\\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|"
            "(\\\\.[0-9]+))))?$'"
        ],
    ),
    "limit neither int nor string (int-or-string)": (
        lambda o: o["spec"]["limits"].update({"cpu": 1.5}),
        ["spec.limits.cpu: 1.5 is not of type 'integer' or 'string'", CEL_SKIPPED],
    ),
    "unknown operator (schema enum, CEL skipped)": (
        lambda o: requirements(o).append({"key": "team", "operator": "Matches", "values": ["a"]}),
        [
            "spec.template.spec.requirements[2].operator: 'Matches' is not one of "
            "['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']",
            CEL_SKIPPED,
        ],
    ),
    "duplicate budget reason (list-type set)": (
        lambda o: o["spec"].update(
            {"disruption": {"consolidateAfter": "0s", "budgets": [{"reasons": ["Empty", "Empty"]}]}}
        ),
        ['spec.disruption.budgets[0].reasons[1]: Duplicate value: "Empty"'],
    ),
    "misspelt field (unknown field)": (
        lambda o: o["spec"]["template"]["spec"].update({"expireAfer": "720h"}),
        ["spec.template.spec.expireAfer: unknown field"],
    ),
    "missing nodeClassRef (schema required)": (
        lambda o: o["spec"]["template"]["spec"].pop("nodeClassRef"),
        ["spec.template.spec: 'nodeClassRef' is a required property", CEL_SKIPPED],
    ),
}


@pytest.mark.parametrize(("mutate", "expected"), NODEPOOL_CASES.values(), ids=NODEPOOL_CASES.keys())
def test_nodepool_errors(mutate: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert validate(mutated(nodepool(), mutate)) == expected


def test_transition_rules_are_skipped_on_creation() -> None:
    # `has(self.replicas) == has(oldSelf.replicas)` would fail without an old object.
    static = mutated(
        nodepool(), lambda o: o["spec"].update({"replicas": 3, "limits": {"nodes": 3}})
    )
    assert validate(static) == []


# ----------------------------------------------------------------------------------------------
# EC2NodeClass
# ----------------------------------------------------------------------------------------------


def interfaces(*entries: tuple[int, int, str]) -> list[dict[str, Any]]:
    return [
        {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}
        for card, device, kind in entries
    ]


EC2NODECLASS_CASES = {
    "role and instanceProfile (CEL)": (
        lambda o: o["spec"].update({"instanceProfile": "KarpenterNodeInstanceProfile"}),
        ["spec: must specify exactly one of ['role', 'instanceProfile']"],
    ),
    "alias with another term (CEL)": (
        lambda o: o["spec"]["amiSelectorTerms"].append({"id": "ami-0123456789"}),
        [
            "spec.amiSelectorTerms: 'alias' is mutually exclusive, cannot be set with a "
            "combination of other amiSelectorTerms"
        ],
    ),
    "alias with a field of the same term (CEL)": (
        lambda o: o["spec"]["amiSelectorTerms"][0].update({"owner": "amazon"}),
        [
            "spec.amiSelectorTerms: 'alias' is mutually exclusive, cannot be set with a "
            "combination of other fields in amiSelectorTerms"
        ],
    ),
    "pinned windows alias (CEL split)": (
        lambda o: o["spec"]["amiSelectorTerms"][0].update({"alias": "windows2022@v20240101"}),
        ["spec.amiSelectorTerms[0].alias: windows families may only specify version 'latest'"],
    ),
    "amiFamily contradicting the alias (CEL find)": (
        lambda o: o["spec"].update({"amiFamily": "Bottlerocket"}),
        ["spec: if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"],
    ),
    "no primary network interface (CEL)": (
        lambda o: o["spec"].update({"networkInterfaces": interfaces((0, 1, "efa-only"))}),
        [
            "spec.networkInterfaces: networkInterfaces must include a primary interface with "
            "interfaceType='interface'"
        ],
    ),
    "two efa-only interfaces on one card (CEL)": (
        lambda o: o["spec"].update(
            {
                "networkInterfaces": interfaces(
                    (0, 0, "interface"), (1, 0, "efa-only"), (1, 1, "efa-only")
                )
            }
        ),
        [
            "spec.networkInterfaces: networkInterfaces must not have duplicate networkCardIndex "
            "and deviceIndex pairs, and can have at most one efa device per network card"
        ],
    ),
    "empty subnet tag value (CEL over a map)": (
        lambda o: o["spec"]["subnetSelectorTerms"][0]["tags"].update({"Name": ""}),
        ["spec.subnetSelectorTerms[0].tags: empty tag keys or values aren't supported"],
    ),
    "restricted tag (CEL startsWith)": (
        lambda o: o["spec"].update({"tags": {"kubernetes.io/cluster/demo": "owned"}}),
        ["spec.tags: tag contains a restricted tag matching kubernetes.io/cluster/"],
    ),
    "two root volumes (CEL filter)": (
        lambda o: o["spec"].update(
            {
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "100Gi"}},
                    {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "1Ti"}},
                ]
            }
        ),
        ["spec.blockDeviceMappings: must have only one blockDeviceMappings with rootVolume"],
    ),
    # Karpenter 1.15 opened spec.kubelet (any KubeletConfiguration field, preserved unknown
    # fields, no CEL rule): the API server no longer refuses evictionSoft without grace periods;
    # Karpenter reports ValidationSucceeded=False on the EC2NodeClass instead (v1.15.1
    # karpenter.k8s.aws_ec2nodeclasses.yaml, `kubelet` description). 1.14.1 refused it with a
    # CEL evaluation error on spec.kubelet.
    "evictionSoft without grace periods (1.15: open kubelet, admitted)": (
        lambda o: o["spec"].update({"kubelet": {"evictionSoft": {"memory.available": "5%"}}}),
        [],
    ),
    "hop limit 0 (schema minimum)": (
        lambda o: o["spec"].update({"metadataOptions": {"httpPutResponseHopLimit": 0}}),
        ["spec.metadataOptions.httpPutResponseHopLimit: 0 is less than the minimum of 1"],
    ),
    "no subnet selector terms (CEL, two rules)": (
        # `!self.all(x, has(x.id) && has(x.tags))` is vacuously false on an empty list as well.
        lambda o: o["spec"].update({"subnetSelectorTerms": []}),
        [
            "spec.subnetSelectorTerms: subnetSelectorTerms cannot be empty",
            "spec.subnetSelectorTerms: 'id' is mutually exclusive, cannot be set with a "
            "combination of other fields in a subnet selector term",
        ],
    ),
    "missing securityGroupSelectorTerms (schema required)": (
        lambda o: o["spec"].pop("securityGroupSelectorTerms"),
        ["spec: 'securityGroupSelectorTerms' is a required property", CEL_SKIPPED],
    ),
}


@pytest.mark.parametrize(
    ("mutate", "expected"), EC2NODECLASS_CASES.values(), ids=EC2NODECLASS_CASES.keys()
)
def test_ec2nodeclass_errors(mutate: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert validate(mutated(ec2nodeclass(), mutate)) == expected


def test_ec2nodeclass_id_exclusivity_is_only_checked_when_every_term_has_an_id() -> None:
    # Upstream uses `!self.all(...)` where `!self.exists(...)` is meant: one bad term among
    # good ones passes, as it does on the API server.
    terms = [{"id": "subnet-0abc", "tags": {"Name": "a"}}, {"tags": {"Name": "b"}}]
    obj = mutated(ec2nodeclass(), lambda o: o["spec"].update({"subnetSelectorTerms": terms}))
    assert validate(obj) == []


def test_ec2nodeclass_efa_layout_is_valid() -> None:
    obj = mutated(
        ec2nodeclass(),
        lambda o: o["spec"].update(
            {
                "networkInterfaces": interfaces(
                    (0, 0, "interface"), (0, 1, "efa-only"), (1, 0, "efa-only")
                )
            }
        ),
    )
    assert validate(obj) == []


# ----------------------------------------------------------------------------------------------
# NodeOverlay, Queue
# ----------------------------------------------------------------------------------------------

NODEOVERLAY_CASES = {
    "capacity overriding cpu (CEL)": (
        lambda o: o["spec"]["capacity"].update({"cpu": "1"}),
        ["spec.capacity: invalid resource restricted"],
    ),
    "price and priceAdjustment (CEL)": (
        lambda o: o["spec"].update({"price": "1.5", "priceAdjustment": "-10%"}),
        ["spec: cannot set both 'price' and 'priceAdjustment'"],
    ),
    "NotIn with empty values (CEL)": (
        lambda o: o["spec"]["requirements"].append(
            {"key": "team", "operator": "NotIn", "values": []}
        ),
        ["spec.requirements: requirements with operator 'NotIn' must have a value defined"],
    ),
    "missing requirements (schema required)": (
        lambda o: o["spec"].pop("requirements"),
        ["spec: 'requirements' is a required property", CEL_SKIPPED],
    ),
}


@pytest.mark.parametrize(
    ("mutate", "expected"), NODEOVERLAY_CASES.values(), ids=NODEOVERLAY_CASES.keys()
)
def test_nodeoverlay_errors(mutate: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert validate(mutated(nodeoverlay(), mutate)) == expected


QUEUE_CASES = {
    "wrong types (schema)": (
        lambda o: o["spec"].update({"priority": "high", "resources": {"gpu": {"quota": "8"}}}),
        [
            "spec.priority: 'high' is not of type 'integer'",
            "spec.resources.gpu.quota: '8' is not of type 'number'",
        ],
    ),
    "misspelt field (unknown field)": (
        lambda o: o["spec"].update({"parent": "default"}),
        ["spec.parent: unknown field"],
    ),
    "a resource that is not cpu, gpu or memory (unknown field)": (
        lambda o: o["spec"]["resources"].update({"nvidia.com/gpu": {"quota": 8}}),
        ["spec.resources[nvidia.com/gpu]: unknown field"],
    ),
}


@pytest.mark.parametrize(("mutate", "expected"), QUEUE_CASES.values(), ids=QUEUE_CASES.keys())
def test_queue_errors(mutate: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    # The Queue CRD has no CEL rules, so no "rules were not checked" line follows type errors.
    assert validate(mutated(queue(), mutate)) == expected


def test_queue_spec_requires_nothing() -> None:
    assert validate(mutated(queue(), lambda o: o.pop("spec"))) == []


PODGROUP_CASES = {
    "minMember below 1 (schema minimum)": (
        lambda o: o["spec"].update({"minMember": 0}),
        ["spec.minMember: 0 is less than the minimum of 1"],
    ),
    "preemptibility not in the enum": (
        lambda o: o["spec"].update({"preemptibility": "Preemptible"}),
        ["spec.preemptibility: 'Preemptible' is not one of ['preemptible', 'non-preemptible']"],
    ),
    "subgroup without a name (schema required)": (
        lambda o: o["spec"]["subGroups"].append({"minMember": 1}),
        ["spec.subGroups[1]: 'name' is a required property"],
    ),
    "subgroup name not a DNS label (pattern)": (
        lambda o: o["spec"]["subGroups"].append({"name": "Workers"}),
        ["spec.subGroups[1].name: 'Workers' does not match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"],
    ),
    "status is KAI's, not modelled": (
        lambda o: o.update({"status": {"phase": "Running"}}),
        [],
    ),
}


@pytest.mark.parametrize(("mutate", "expected"), PODGROUP_CASES.values(), ids=PODGROUP_CASES.keys())
def test_podgroup_errors(mutate: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert validate(mutated(podgroup(), mutate)) == expected


def test_mpijob_defaults() -> None:
    """mpi-operator v0.6.0's defaults (tests/upstream_facts/crds/mpi-operator.yaml)."""
    obj = mutated(mpijob(), lambda o: o["spec"].update({"runPolicy": {}}))
    assert apply_defaults(schema_of(obj), obj)["spec"] == {
        **obj["spec"],
        "slotsPerWorker": 1,
        "launcherCreationPolicy": "AtStartup",
        "mpiImplementation": "OpenMPI",
        "runLauncherAsWorker": False,
        "sshAuthMountPath": "/root/.ssh",
        "runPolicy": {"suspend": False},
    }


MPIJOB_CASES = {
    "no replica specs (schema required)": (
        lambda o: o["spec"].pop("mpiReplicaSpecs"),
        ["spec: 'mpiReplicaSpecs' is a required property"],
    ),
    "an MPI implementation not in the enum": (
        lambda o: o["spec"].update({"mpiImplementation": "OpenMPI5"}),
        ["spec.mpiImplementation: 'OpenMPI5' is not one of ['OpenMPI', 'Intel', 'MPICH']"],
    ),
    "a pod template without containers (schema required)": (
        lambda o: o["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"].pop("containers"),
        ["spec.mpiReplicaSpecs.Worker.template.spec: 'containers' is a required property"],
    ),
    "a template metadata field ObjectMeta's CRD form lacks (unknown field)": (
        lambda o: o["spec"]["mpiReplicaSpecs"]["Worker"]["template"].update(
            {"metadata": {"generateName": "w-"}}
        ),
        ["spec.mpiReplicaSpecs.Worker.template.metadata.generateName: unknown field"],
    ),
    "a runPolicy field the project does not model (unknown field)": (
        lambda o: o["spec"].update({"runPolicy": {"schedulingPolicy": {"queue": "q"}}}),
        ["spec.runPolicy.schedulingPolicy: unknown field"],
    ),
}


@pytest.mark.parametrize(("mutate", "expected"), MPIJOB_CASES.values(), ids=MPIJOB_CASES.keys())
def test_mpijob_errors(mutate: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert validate(mutated(mpijob(), mutate)) == expected


# ----------------------------------------------------------------------------------------------
# CEL engine coverage
# ----------------------------------------------------------------------------------------------


def test_every_reference_rule_is_evaluable() -> None:
    assert check_compilable() == EXPECTED_UNEVALUABLE


def test_reference_rule_inventory() -> None:
    rules = all_rules()
    # 92 with Karpenter 1.14.1's CRDs; 1.15.1's open EC2NodeClass kubelet has none of its ten.
    assert len(rules) == 82
    transition = {(r.crd, r.path, r.rule) for r in rules if "oldSelf" in r.rule}
    assert transition == TRANSITION_RULES


def test_validating_the_cases_above_meets_no_unevaluable_rule() -> None:
    cases = [
        (build, mutate)
        for build, table in (
            (nodepool, NODEPOOL_CASES),
            (ec2nodeclass, EC2NODECLASS_CASES),
            (nodeoverlay, NODEOVERLAY_CASES),
            (queue, QUEUE_CASES),
        )
        for mutate, _ in table.values()
    ]
    for build, mutate in cases:
        validate(mutated(build(), mutate))
    assert unevaluable_rules() == set(EXPECTED_UNEVALUABLE)


def rule_schema(*rules: dict[str, Any]) -> dict[str, Any]:
    """An object schema whose ``spec.value`` (a string) carries ``rules``."""
    value = {"type": "string", "x-kubernetes-validations": list(rules)}
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"value": value}}},
    }


def spec_value(value: Any) -> dict[str, Any]:
    return {"spec": {"value": value}}


@pytest.mark.parametrize(
    "rule",
    [
        "self.split('@') == ['al2023', 'latest']",
        "self.split('@', 1) == ['al2023@latest']",
        "self.split('').size() == 13",
        "self.lowerAscii() == 'al2023@latest' && self.upperAscii() == 'AL2023@LATEST'",
        "self.indexOf('@') == 6 && self.indexOf('a', 1) == 8 && self.indexOf('x') == -1",
        "self.lastIndexOf('a') == 8 && self.lastIndexOf('a', 7) == 0",
        "self.substring(7) == 'latest' && self.substring(0, 6) == 'al2023'",
        "self.replace('l', 'L') == 'aL2023@Latest' && self.replace('l', 'L', 1) == 'aL2023@latest'",
        "(' ' + self + ' ').trim() == self",
        "['a', 'b'].join() == 'ab' && ['a', 'b'].join('-') == 'a-b'",
        "self.charAt(0) == 'a' && self.charAt(13) == ''",
        "self.find('[0-9]+') == '2023' && self.find('z') == ''",
        "self.findAll('[a-z]') == ['a', 'l', 'l', 'a', 't', 'e', 's', 't']",
        "self.findAll('[a-z]', 2) == ['a', 'l']",
        "self.matches('^[a-z0-9]+@latest$') && self.startsWith('al') && self.endsWith('st')",
        "[1, 2, 3].exists_one(x, x > 2) && [1, 2].map(x, x * 2) == [2, 4]",
    ],
)
def test_kubernetes_cel_string_library(rule: str) -> None:
    assert validate_against_schema(rule_schema({"rule": rule}), spec_value("al2023@latest")) == []


def test_cel_runtime_error_is_reported() -> None:
    rule = "self.substring(20) == ''"
    assert validate_against_schema(rule_schema({"rule": rule}), spec_value("short")) == [
        "spec.value: substring out of range: [20, 5) of 5 characters evaluating rule: "
        "self.substring(20) == ''"
    ]


def test_cel_message_expression_field_path_and_default_message() -> None:
    schema = rule_schema(
        {"rule": "self != 'a'", "messageExpression": "'got ' + self", "message": "static"},
        {"rule": "self != 'a'", "messageExpression": "self.missing", "message": "fallback"},
        {"rule": "self != 'a'", "fieldPath": ".detail"},
    )
    assert validate_against_schema(schema, spec_value("a")) == [
        "spec.value: got a",
        "spec.value: fallback",
        "spec.value.detail: failed rule: self != 'a'",
    ]


def test_unevaluable_rule_is_recorded_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crd_validation, "_UNEVALUABLE", set())
    schema = rule_schema(
        {"rule": "isQuantity(self)"},  # Kubernetes quantity library: not implemented
        {"rule": "self.size()"},  # not a bool: the API server would reject the CRD
        {"rule": "self.size() == 3"},
    )
    assert validate_against_schema(schema, spec_value("1Gi")) == []
    assert unevaluable_rules() == {"isQuantity(self)", "self.size()"}


def test_nullable_formats_and_int_or_string() -> None:
    schema = {
        "type": "object",
        "properties": {
            "optional": {"type": "string", "nullable": True},
            "count": {"type": "integer", "format": "int32"},
            "when": {"type": "string", "format": "date-time"},
            "size": {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
            },
        },
    }
    valid = {"optional": None, "count": 3, "when": "2024-05-01T12:00:00Z", "size": "1Gi"}
    assert validate_against_schema(schema, valid) == []
    invalid = {"count": 2**31, "when": "2024-13-01T00:00:00Z", "size": True}
    assert validate_against_schema(schema, invalid) == [
        "count: 2147483648 is not a 'int32'",
        "size: True is not of type 'integer' or 'string'",
        "when: '2024-13-01T00:00:00Z' is not a 'date-time'",
    ]
