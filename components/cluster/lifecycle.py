"""Lifecycle checks and helpers of the cluster. Pure.

- ``kubeconfig_with_credentials``: the Kubernetes provider's kubeconfig with ``--profile`` when
  the stack sets ``aws:profile`` and ``--role-arn`` when it sets ``aws:assumeRoles``. pulumi-eks
  4.4.0 gives its own provider that kubeconfig but publishes the one without it
  (pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts L232-237 and L908-921, v4.3.0 == HEAD
  7bf0c1b: ``kubeconfig: kubeconfigWithoutProfile``), so a provider built from
  ``kubeconfig_json`` runs ``aws eks get-token`` as whatever identity the environment has.
- ``credential_problems``: stack AWS credentials ``aws eks get-token`` cannot reproduce.
- ``placeholder_cidrs``: documentation ranges (RFC 5737) in ``publicAccessCidrs``.
"""

import ipaddress
import json
from collections.abc import Mapping
from typing import Any

# RFC 5737 documentation ranges: TEST-NET-1, -2 and -3.
DOCUMENTATION_CIDRS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")


def kubeconfig_with_credentials(
    kubeconfig_json: str, profile: str | None, role_arn: str | None = None
) -> str:
    """The kubeconfig with ``--role-arn <role>`` and ``--profile <profile>`` appended to every
    ``aws`` exec user's arguments, as pulumi-eks's generateKubeconfig does for its
    ``providerCredentialOpts`` (cluster.ts L228-237, v4.3.0: ``--role`` and ``--profile``; "Use
    --profile instead of AWS_PROFILE because the latter can be overridden by ambient
    credentials"). ``--role-arn`` is the option's full name in the AWS CLI ("aws eks get-token
    --cluster-name <value> [--role-arn <value>]", AWS CLI reference, eks get-token): the token
    is then signed by that role, assumed from the same base credentials the stack's provider
    assumes it from, so the Kubernetes steps run as the identity the program resolved."""
    if not profile and not role_arn:
        return kubeconfig_json
    config = json.loads(kubeconfig_json)
    for user in config.get("users") or ():
        exec_ = (user.get("user") or {}).get("exec")
        if not exec_ or exec_.get("command") != "aws":
            continue
        args = list(exec_.get("args", []))
        if role_arn and "--role-arn" not in args and "--role" not in args:
            args += ["--role-arn", role_arn]
        if profile and "--profile" not in args:
            args += ["--profile", profile]
        exec_["args"] = args
    return json.dumps(config)


def kubeconfig_with_profile(kubeconfig_json: str, profile: str | None) -> str:
    """``kubeconfig_with_credentials`` with a profile only."""
    return kubeconfig_with_credentials(kubeconfig_json, profile)


# What `aws eks get-token --role-arn` reproduces of an aws:assumeRoles entry: the role, and
# nothing that changes whether the assumption succeeds (it has no --external-id or
# --source-identity; pulumi-aws's assume_roles items: pulumi_aws/config/outputs.py AssumeRoles).
ASSUME_ROLE_KEYS_KEPT = ("roleArn", "sessionName", "duration")
STATIC_KEYS = ("aws:accessKey", "aws:secretKey", "aws:token")


def _assume_roles(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def stack_assumed_role(value: Any) -> str | None:
    """The role ``aws:assumeRoles`` makes the default provider assume (one entry), else None."""
    roles = _assume_roles(value)
    if isinstance(roles, list) and len(roles) == 1 and isinstance(roles[0], Mapping):
        arn = roles[0].get("roleArn")
        return arn if isinstance(arn, str) and arn else None
    return None


def credential_problems(stack_aws: Mapping[str, Any]) -> list[str]:
    """The stack's ``aws:`` credential settings the Kubernetes steps cannot follow.

    Every Kubernetes step authenticates with ``aws eks get-token`` from the kubeconfig, which
    runs the AWS CLI with the environment's credentials plus the options this program adds
    (``kubeconfig_with_credentials``); the stack's AWS provider reads its own configuration.
    Static keys in the stack, a web identity, a chain of roles or an assumption the CLI cannot
    repeat would make the two authenticate as different principals (401 on every Kubernetes
    step, no warning): refused here, naming the key."""
    out = [
        f"{key}: static credentials in the stack configuration reach the AWS provider but not "
        "`aws eks get-token`, which every Kubernetes step runs with the environment's "
        "credentials; remove it and provide them through the environment (AWS_ACCESS_KEY_ID, "
        "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or aws:profile"
        for key in STATIC_KEYS
        if stack_aws.get(key)
    ]
    if stack_aws.get("aws:assumeRoleWithWebIdentity"):
        out.append(
            "aws:assumeRoleWithWebIdentity: `aws eks get-token` cannot assume a role with a web "
            "identity token, so the Kubernetes steps would run as another identity; assume the "
            "role in the environment instead (CI: aws-actions/configure-aws-credentials)"
        )
    if stack_aws.get("aws:assumeRole"):
        out.append(
            "aws:assumeRole: not read by pulumi-aws 7 (its setting is aws:assumeRoles, a list); "
            "use aws:assumeRoles with one roleArn"
        )
    roles = _assume_roles(stack_aws.get("aws:assumeRoles"))
    if roles in (None, "", []):
        return out
    if not isinstance(roles, list) or not all(isinstance(r, Mapping) for r in roles):
        out.append(f"aws:assumeRoles: {roles!r} is not a list of objects with a roleArn")
    elif len(roles) > 1:
        out.append(
            f"aws:assumeRoles: lists {len(roles)} roles (a chain); `aws eks get-token "
            "--role-arn` assumes one role from the environment's credentials, so the "
            "Kubernetes steps would run as another identity; list one role, or assume the "
            "chain in the environment"
        )
    else:
        (role,) = roles
        if not role.get("roleArn"):
            out.append("aws:assumeRoles[0].roleArn: is required")
        for key in sorted(set(role) - set(ASSUME_ROLE_KEYS_KEPT)):
            out.append(
                f"aws:assumeRoles[0].{key}: `aws eks get-token --role-arn` cannot pass it, so "
                "the Kubernetes steps could not assume the role the provider assumes; allowed: "
                + ", ".join(ASSUME_ROLE_KEYS_KEPT)
                + " (assume the role in the environment instead)"
            )
    return out


def placeholder_cidrs(cidrs: tuple[str, ...]) -> list[str]:
    """The entries of ``cidrs`` inside a documentation range: nothing real ever comes from
    them, so the API server is unreachable from where the program runs."""
    docs = [ipaddress.ip_network(c) for c in DOCUMENTATION_CIDRS]
    out = []
    for cidr in cidrs:
        try:
            net = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue
        if any(net.version == d.version and net.subnet_of(d) for d in docs):
            out.append(cidr)
    return out


def placeholder_message(cidrs: list[str]) -> str:
    return (
        f"cluster.publicAccessCidrs: {', '.join(cidrs)} "
        f"{'is a documentation range' if len(cidrs) == 1 else 'are documentation ranges'} "
        "(RFC 5737), not your network: pulumi-eks would wait minutes for an endpoint it cannot "
        "reach and every Kubernetes step would time out; list your operators' and CI runners' "
        "egress CIDRs"
    )
