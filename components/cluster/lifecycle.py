"""Lifecycle checks and helpers of the cluster. Pure.

- ``kubeconfig_with_profile``: the Kubernetes provider's kubeconfig with ``--profile`` when the
  stack sets ``aws:profile``. pulumi-eks 4.4.0 gives its own provider that kubeconfig but
  publishes the one without it (pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts L232-237 and
  L908-921, v4.3.0 == 4.4.0: ``kubeconfig: kubeconfigWithoutProfile``), so a provider built from
  ``kubeconfig_json`` runs ``aws eks get-token`` as whatever identity the environment has.
- ``placeholder_cidrs``: documentation ranges (RFC 5737) in ``publicAccessCidrs``.
"""

import ipaddress
import json

# RFC 5737 documentation ranges: TEST-NET-1, -2 and -3.
DOCUMENTATION_CIDRS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")


def kubeconfig_with_profile(kubeconfig_json: str, profile: str | None) -> str:
    """The kubeconfig with ``--profile <profile>`` appended to every ``aws`` exec user's
    arguments, as pulumi-eks's generateKubeconfig does (cluster.ts L232-237: "Use --profile
    instead of AWS_PROFILE because the latter can be overridden by ambient credentials")."""
    if not profile:
        return kubeconfig_json
    config = json.loads(kubeconfig_json)
    for user in config.get("users") or ():
        exec_ = (user.get("user") or {}).get("exec")
        if exec_ and exec_.get("command") == "aws" and "--profile" not in exec_.get("args", []):
            exec_["args"] = [*exec_.get("args", []), "--profile", profile]
    return json.dumps(config)


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
