"""The validation run's own identity (issue 29, point 8): ``validation.principal`` gets an EKS
access entry in the Kubernetes group ``eks-gpu-platform-validate`` with no access policy, and the
group is bound to the validation's least-privilege ClusterRole, created by the stack.

EKS: an access entry's ``kubernetesGroups`` are "The value for name that you've specified for
kind: Group as a subject in a Kubernetes RoleBinding or ClusterRoleBinding object"
(https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html; user guide:
https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html). Expected manifests and
inputs are written out here; the kinds oracle is the offline render's ``manifests/`` (every
``kubernetes:`` registration but Helm releases)."""

from __future__ import annotations

import copy

import pytest
from stack_files import fixture_stack
from test_preflight import (
    ACCOUNT,
    ENTRY,
    ONLY_THE_COMPONENT,
    SSO_PATH,
    SSO_ROLE,
    dev_config,
    refused,
    registrations_on_refusal,
    shared_up,
    up,
)

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline.summary import markdown_summary
from eks_gpu_platform.offline.write import kubernetes_objects
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.validation_access.kinds import platform_kinds

ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
KEY = "eks-gpu-platform:validation"
LABELS = {"app.kubernetes.io/managed-by": "eks-gpu-platform"}


def with_principal(config: dict, principal: str) -> dict:
    out = copy.deepcopy(config)
    out[KEY] = {**out.get(KEY, {}), "principal": principal}
    return out


def rendered_kinds(rec) -> list[tuple[str, str]]:
    return sorted({(o["apiVersion"], o["kind"]) for o in kubernetes_objects(rec)})


def config_of(values: dict, region: str) -> PlatformConfig:
    return PlatformConfig.load(stack_config_values(values), region)


# ---- the kinds: derived from the config, equal to what the render holds ------------------------

DEV_KINDS = [
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
    ("karpenter.k8s.aws/v1", "EC2NodeClass"),
    ("karpenter.sh/v1", "NodePool"),
    ("karpenter.sh/v1alpha1", "NodeOverlay"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.run.ai/v2", "Queue"),
    ("v1", "Namespace"),
    ("v1", "ResourceQuota"),
]
RBAC_KINDS = [
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
]


@pytest.mark.parametrize("name", ["dev", "prod"])
def test_the_kinds_are_the_fixture_renders_kinds(name, render_stack):
    stack = fixture_stack(name)
    rec = render_stack(name)
    assert rendered_kinds(rec) == DEV_KINDS  # both fixture stacks render the same kinds
    assert platform_kinds(config_of(stack.config, stack.region)) == DEV_KINDS


def test_with_a_principal_the_role_and_binding_join_the_kinds(monkeypatch):
    config = with_principal(dev_config(), "role/GitHubActionsValidate-dev")
    rec = shared_up(monkeypatch, config)
    expected = sorted(DEV_KINDS + RBAC_KINDS)
    assert rendered_kinds(rec) == expected
    assert platform_kinds(config_of(config, "us-west-2")) == expected


def test_without_the_scheduler_the_kinds_follow_the_render(monkeypatch):
    """A variant turning the scheduler off: no queue, policy or quota kind in either."""
    config = dev_config()
    config["eks-gpu-platform:scheduler"] = {"enabled": False}
    # Without queues to size them, GPU pools need their own cap.
    config["eks-gpu-platform:nodePools"] = [
        p if p.get("kind") == "cpu" else {**p, "limits": {**p.get("limits", {}), "gpus": 8}}
        for p in config["eks-gpu-platform:nodePools"]
    ]
    rec = up(monkeypatch, config)
    expected = [
        ("karpenter.k8s.aws/v1", "EC2NodeClass"),
        ("karpenter.sh/v1", "NodePool"),
        ("karpenter.sh/v1alpha1", "NodeOverlay"),
        ("v1", "Namespace"),
    ]
    assert rendered_kinds(rec) == expected
    assert platform_kinds(config_of(config, "us-west-2")) == expected


def test_before_kubernetes_1_36_no_mutating_policy_kind(monkeypatch):
    """MutatingAdmissionPolicy v1 is GA from 1.36 (KEP-3962); the platform renders it only
    there, so a 1.35 stack's role reads no such kind."""
    config = dev_config(kubernetesVersion="1.35")
    config["eks-gpu-platform:cluster"].pop("addonVersions")
    rec = up(monkeypatch, config)
    expected = [k for k in DEV_KINDS if not k[1].startswith("MutatingAdmissionPolicy")]
    assert rendered_kinds(rec) == expected
    assert platform_kinds(config_of(config, "us-west-2")) == expected


# ---- what the stack registers -----------------------------------------------------------------

DEPLOYED_ROLE_RULES = [
    {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]},
    {
        "apiGroups": [""],
        "resources": ["namespaces", "pods"],
        "verbs": ["get", "list", "create", "delete"],
    },
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["pods/log", "resourcequotas"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["create", "delete"]},
    {
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": [
            "mutatingadmissionpolicies",
            "mutatingadmissionpolicybindings",
            "validatingadmissionpolicies",
            "validatingadmissionpolicybindings",
        ],
        "verbs": ["get"],
    },
    {
        "apiGroups": ["apps"],
        "resources": ["daemonsets", "deployments", "replicasets", "statefulsets"],
        "verbs": ["get"],
    },
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "create", "delete"]},
    {"apiGroups": ["karpenter.k8s.aws"], "resources": ["ec2nodeclasses"], "verbs": ["get"]},
    {
        "apiGroups": ["karpenter.sh"],
        "resources": ["nodeclaims"],
        "verbs": ["get", "list", "delete"],
    },
    {"apiGroups": ["karpenter.sh"], "resources": ["nodeoverlays", "nodepools"], "verbs": ["get"]},
    {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["create", "delete"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["get"]},
    {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterrolebindings", "clusterroles"],
        "verbs": ["get"],
    },
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["get"]},
    {
        "apiGroups": ["scheduling.run.ai"],
        "resources": ["podgroups"],
        "verbs": ["get", "create", "delete"],
    },
    {"apiGroups": ["scheduling.run.ai"], "resources": ["queues"], "verbs": ["get"]},
]


@pytest.fixture(name="deployed")
def deployed_fixture(monkeypatch):
    return shared_up(monkeypatch, with_principal(dev_config(), "role/GitHubActionsValidate-dev"))


def test_the_role_is_exactly_this(deployed):
    (role,) = deployed.of_type(ROLE)
    assert role.name == "platform-validation-role"
    assert role.inputs == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "eks-gpu-platform-validate", "labels": LABELS},
        "rules": DEPLOYED_ROLE_RULES,
    }


def test_the_binding_is_exactly_this_and_waits_for_the_role(deployed):
    (role,) = deployed.of_type(ROLE)
    (binding,) = deployed.of_type(BINDING)
    assert binding.name == "platform-validation-binding"
    assert binding.inputs == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "eks-gpu-platform-validate", "labels": LABELS},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "eks-gpu-platform-validate",
        },
        "subjects": [
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Group",
                "name": "eks-gpu-platform-validate",
            }
        ],
    }
    assert role.urn in binding.dependencies


def test_the_entry_is_standard_in_the_group_without_a_policy(deployed):
    (binding,) = deployed.of_type(BINDING)
    entry = deployed.named("platform-validation-entry")
    assert entry.type == ENTRY
    assert {k: entry.inputs[k] for k in ("principalArn", "type", "kubernetesGroups")} == {
        "principalArn": f"arn:aws:iam::{ACCOUNT}:role/GitHubActionsValidate-dev",
        "type": "STANDARD",
        "kubernetesGroups": ["eks-gpu-platform-validate"],
    }
    assert entry.inputs["tags"]["eks-gpu-platform/cluster"] == "gpu-dev"
    assert binding.urn in entry.dependencies
    # No access policy: the group's RBAC binding is all it may do.
    assert not [
        a
        for a in deployed.of_type(ASSOCIATION)
        if "GitHubActionsValidate" in str(a.inputs.get("principalArn"))
    ]
    # Nothing waits for the entry: destroy removes the access first.
    assert not [r.name for r in deployed.resources if entry.urn in r.dependencies]


def test_the_summary_names_the_validation_role(deployed):
    text = markdown_summary(deployed, "dev")
    assert [line for line in text.splitlines() if line.startswith("- Validation:")] == [
        f"- Validation: `arn:aws:iam::{ACCOUNT}:role/GitHubActionsValidate-dev` (group "
        "`eks-gpu-platform-validate`, its own ClusterRole, no access policy)"
    ]


def test_no_principal_no_role_binding_or_entry(monkeypatch):
    rec = shared_up(monkeypatch, dev_config())
    assert (rec.of_type(ROLE), rec.of_type(BINDING)) == ([], [])
    assert "- Validation:" not in markdown_summary(rec, "dev")
    assert not [r for r in rec.of_type(ENTRY) if r.name.startswith("platform-validation")]


def test_a_role_with_a_path_gets_its_entry_under_its_real_arn(monkeypatch):
    rec = up(
        monkeypatch,
        with_principal(dev_config(), f"role/{SSO_ROLE}"),
        iam_paths={SSO_ROLE: SSO_PATH},
    )
    entry = rec.named("platform-validation-entry")
    assert entry.inputs["principalArn"] == f"arn:aws:iam::{ACCOUNT}:role{SSO_PATH}{SSO_ROLE}"


def test_a_missing_principal_is_refused_before_anything_is_registered(monkeypatch):
    config = with_principal(dev_config(), "role/GitHubActionsValidate-dev")
    missing = frozenset({"GitHubActionsValidate-dev"})
    assert refused(monkeypatch, config, missing_iam_principals=missing) == [
        "validation.principal: 'role/GitHubActionsValidate-dev': no IAM role named "
        f"GitHubActionsValidate-dev exists in account {ACCOUNT} (iam:GetRole found none); EKS "
        'would refuse its access entry ("The specified principalArn is invalid: invalid '
        'principal") after the cluster is created; create it first, or remove it from the list'
    ]
    seen = registrations_on_refusal(monkeypatch, config, missing_iam_principals=missing)
    assert seen == ONLY_THE_COMPONENT


# ---- bad input ----------------------------------------------------------------------------------


def problems(principal: str, **cluster) -> list[str]:
    values = with_principal(dev_config(**cluster), principal)
    with pytest.raises(SpecError) as err:
        config_of(values, "us-west-2")
    return err.value.lines


def test_a_user_is_not_a_validation_role():
    assert problems("user/bob") == [
        "validation.principal: 'user/bob' is not an IAM role; expected an ARN "
        "such as 'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME'"
    ]


def test_a_principal_that_is_also_an_admin_is_refused():
    assert problems("role/PlatformAdmin") == [
        "validation.principal: 'role/PlatformAdmin' is also cluster.admins[0]; "
        "a principal has one access entry, and the validation role gets only its own "
        "ClusterRole: use a role of its own"
    ]


def test_a_principal_in_another_partition_is_refused():
    arn = "arn:aws-cn:iam::123456789012:role/Validate"
    assert problems(arn) == [
        f"validation.principal: '{arn}' is in partition 'aws-cn', but region us-west-2 is in 'aws'"
    ]
