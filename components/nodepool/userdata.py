"""User data for the pools' nodes (pure; no Pulumi): the node-start levers.

Every EC2NodeClass gets user data that Karpenter merges with its own:

- **Parallel image pulls, registry QPS and burst.** AL2023: a ``NodeConfig`` part whose
  ``spec.kubelet.config`` nodeadm merges into the kubelet's configuration (nodeadm API
  ``KubeletOptions.Config``, awslabs/amazon-eks-ami ``nodeadm/api/v1alpha1/nodeconfig_types.go``;
  https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/api/). Karpenter v1.15.0 keeps the
  user's parts and appends its own NodeConfig after them (pkg/providers/amifamily/bootstrap/
  nodeadm.go ``Script`` L40-58); its values win only for the fields it sets itself (cluster,
  taints, labels, ``spec.kubelet``: the v1.15 docs, website/content/en/v1.15/concepts/
  nodeclasses.md, "AL2023" under UserData), and the pull settings are not among them: its
  kubelet config is ``spec.kubelet`` copied key by key plus ``registerWithTaints`` (nodeadm.go
  ``generateInlineKubeletConfiguration`` L103-117), and ``spec.kubelet``, a free-form map
  (pkg/apis/v1/ec2nodeclass.go L283-289) that could carry them, holds only what these
  EC2NodeClasses write: ``maxPods``, ``systemReserved``, ``kubeReserved`` (parts.py
  ``KubeletSpec``). The kubelet
  fields are ``serializeImagePulls``, ``maxParallelImagePulls`` ("cannot be set if
  SerializeImagePulls is true"; nil = no limit), ``registryPullQPS`` (default 5) and
  ``registryBurst`` (default 10): https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/
  (k8s.io/kubelet/config/v1beta1/types.go, vendored in nodeadm). nodeadm's own default is
  already ``serializeImagePulls: false`` with no bound (nodeadm/internal/kubelet/config.go line
  124); the NodeConfig states it and bounds the parallelism, so a node pulling a dozen images at
  once does not saturate its disk and network.
  Bottlerocket: ``serializeImagePulls: false`` is fixed in its kubelet configuration template
  (bottlerocket-os/bottlerocket-core-kit ``packages/kubernetes-1.31/kubelet-config`` line 140;
  there is no ``settings.kubernetes.serialize-image-pulls``), so its pulls are parallel already;
  ``settings.kubernetes.registry-qps`` and ``registry-burst`` raise the rate
  (https://bottlerocket.dev/en/os/1.54.x/api/settings/kubernetes/; Karpenter v1.15.0 keeps both:
  pkg/providers/amifamily/bootstrap/bottlerocketsettings.go lines 70-71).
  ``settings.kubernetes.max-parallel-image-pulls`` (Bottlerocket 1.51+) is not set: Karpenter
  v1.15.0 rebuilds ``settings.kubernetes`` from its typed struct, which has no such field
  (bottlerocketsettings.go line 189; "Unknown TOML fields will be ignored"), so it would never
  reach the node.
- **Hugepages for EFA** (EFA pools): a shell part (AL2023) or a sysctl setting (Bottlerocket).
- **Pre-pulled images** (``prePullImages``, AL2023 only; see ``pre_pull_problems``).

Instance-store NVMe: ``instanceStorePolicy: RAID0`` (GPU pools, manifests.py) makes Karpenter
set ``spec.instance.localStorage.strategy: RAID0`` in its NodeConfig (nodeadm.go line 88), and
nodeadm runs ``setup-local-disks raid0`` (nodeadm/internal/system/local_disk.go), which builds
``/dev/md/kubernetes`` from every NVMe instance-store disk, mounts it at ``/mnt/k8s-disks/0`` and
bind-mounts ``/var/lib/kubelet``, ``/var/lib/containerd``, ``/var/lib/soci-snapshotter-grpc``
and ``/var/log/pods`` onto it (templates/al2023/runtime/bin/setup-local-disks, ``maybe_raid``;
amazon-eks-ami v20260724). tests/upstream_facts/node_bootstrap.py cites each of these facts
(Karpenter's are read from its Go module); tests/nodepool/test_userdata.py pins them. On
Bottlerocket Karpenter adds
the bootstrap command ``apiclient ephemeral-storage init`` + ``bind --dirs /var/lib/containerd
/var/lib/kubelet /var/log/pods`` (pkg/providers/amifamily/bootstrap/bottlerocket.go lines
99-115 at v1.15.0 and v1.15.1). Image layers are therefore unpacked on the striped NVMe, and
Karpenter counts its size as the node's ephemeral storage (nodeclasses.md,
"spec.instanceStorePolicy").
"""

import re
from collections.abc import Sequence

# The pull levers (README, "Node start"). The bound keeps a node from starting more pulls than
# its disk and network serve well; QPS/burst are raised so that the limiter (5/s, burst 10 by
# default) never holds back a parallel pull.
MAX_PARALLEL_IMAGE_PULLS = 10
REGISTRY_PULL_QPS = 20
REGISTRY_BURST = 40

HUGEPAGE_BYTES = 2 * 1024 * 1024
MAX_PRE_PULL_IMAGES = 10
MIME_BOUNDARY = "//"

# An image reference (https://github.com/distribution/reference, reference.go grammar): an
# optional registry host[:port], lowercase path components, then a tag and/or a digest. This
# also keeps every character the boot script quotes out of shell meaning.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"sha256:[a-f0-9]{64}"
IMAGE_REFERENCE = (
    rf"(?:{_HOST}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
    rf"(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?"
)

PRE_PULL_UNIT = "eks-gpu-platform-pre-pull.service"
PRE_PULL_SCRIPT = "/usr/local/bin/eks-gpu-platform-pre-pull"


def kubelet_pull_config() -> dict[str, object]:
    """The kubelet configuration fields the AL2023 NodeConfig sets."""
    return {
        "serializeImagePulls": False,
        "maxParallelImagePulls": MAX_PARALLEL_IMAGE_PULLS,
        "registryPullQPS": REGISTRY_PULL_QPS,
        "registryBurst": REGISTRY_BURST,
    }


def hugepages_count(hugepages_2mi: str) -> int:
    """``"5120Mi"`` -> 2560 pages of 2 MiB."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"([0-9]+)(Ki|Mi|Gi|Ti)", hugepages_2mi)
    if not match:
        raise ValueError(f"not a binary quantity: {hugepages_2mi!r}")
    return int(match.group(1)) * units[match.group(2)] // HUGEPAGE_BYTES


def _node_config_part() -> str:
    config = kubelet_pull_config()
    lines = [
        "Content-Type: application/node.eks.aws",
        "",
        "apiVersion: node.eks.aws/v1alpha1",
        "kind: NodeConfig",
        "spec:",
        "  kubelet:",
        "    config:",
        *(f"      {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in config.items()),
    ]
    return "\n".join(lines) + "\n"


def _hugepages_part(pages: int) -> str:
    return (
        'Content-Type: text/x-shellscript; charset="us-ascii"\n'
        "\n"
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "# Reserve 2 MiB hugepages for EFA (libfabric/NCCL) before the kubelet starts.\n"
        f'echo "vm.nr_hugepages = {pages}" > /etc/sysctl.d/90-efa-hugepages.conf\n'
        "sysctl -p /etc/sysctl.d/90-efa-hugepages.conf\n"
    )


def _pre_pull_part(images: Sequence[str]) -> str:
    """A shell part that installs a oneshot unit pulling ``images`` once the node runs.

    User-data scripts run in cloud-final, after ``nodeadm-config`` (containerd configured, local
    disks mounted) and before ``nodeadm-run`` starts containerd and the kubelet (amazon-eks-ami
    templates/al2023/runtime/rootfs/etc/systemd/system/nodeadm-run.service: ``After=...
    cloud-final.service``). The unit is ordered after ``nodeadm-run`` and started without
    blocking the boot. It pulls the way the AMI caches its pause image: ``ctr --namespace k8s.io
    image pull``, with ``--user AWS:$(aws ecr get-login-password)`` for ECR (the AMI ships the
    AWS CLI; templates/al2023/runtime/bin/cache-pause-container lines 22-35). Pulls run in
    parallel, three tries each; a failure is logged and left to the kubelet.
    """
    quoted = " ".join(f"'{image}'" for image in images)
    return (
        'Content-Type: text/x-shellscript; charset="us-ascii"\n'
        "\n"
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "# Pre-pull this pool's images into the kubelet's containerd namespace once it runs.\n"
        f"cat > {PRE_PULL_SCRIPT} <<'SCRIPT'\n"
        "#!/bin/bash\n"
        "pull() {\n"
        '  local image="$1" region args=()\n'
        '  if [[ "$image" =~ ^[0-9]{12}\\.dkr\\.ecr\\.([a-z0-9-]+)\\.amazonaws\\.com ]]; then\n'
        '    region="${BASH_REMATCH[1]}"\n'
        '    args=(--user "AWS:$(aws ecr get-login-password --region "$region")")\n'
        "  fi\n"
        "  for attempt in 1 2 3; do\n"
        '    ctr --namespace k8s.io image pull "${args[@]}" "$image" > /dev/null && return 0\n'
        "    sleep $((attempt * 10))\n"
        "  done\n"
        '  echo "pre-pull of $image failed; the kubelet pulls it when a pod needs it" >&2\n'
        "}\n"
        'for image in "$@"; do pull "$image" & done\n'
        "wait\n"
        "SCRIPT\n"
        f"chmod 0755 {PRE_PULL_SCRIPT}\n"
        f"cat > /etc/systemd/system/{PRE_PULL_UNIT} <<'UNIT'\n"
        "[Unit]\n"
        "Description=Pre-pull this node pool's container images\n"
        "After=nodeadm-run.service containerd.service\n"
        "Wants=containerd.service\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={PRE_PULL_SCRIPT} {quoted}\n"
        "UNIT\n"
        "systemctl daemon-reload\n"
        f"systemctl start --no-block {PRE_PULL_UNIT}\n"
    )


def al2023_user_data(*, hugepages_2mi: str | None = None, pre_pull: Sequence[str] = ()) -> str:
    """A MIME multi-part archive: the NodeConfig, then the hugepages and pre-pull scripts."""
    parts = [_node_config_part()]
    if hugepages_2mi is not None:
        parts.append(_hugepages_part(hugepages_count(hugepages_2mi)))
    if pre_pull:
        parts.append(_pre_pull_part(pre_pull))
    head = f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n\n'
    body = "".join(f"--{MIME_BOUNDARY}\n{part}" for part in parts)
    return f"{head}{body}--{MIME_BOUNDARY}--\n"


def bottlerocket_user_data(*, hugepages_2mi: str | None = None) -> str:
    """TOML settings: registry QPS and burst, and the EFA hugepages sysctl."""
    text = (
        "[settings.kubernetes]\n"
        f"registry-qps = {REGISTRY_PULL_QPS}\n"
        f"registry-burst = {REGISTRY_BURST}\n"
    )
    if hugepages_2mi is not None:
        pages = hugepages_count(hugepages_2mi)
        text += f'\n[settings.kernel.sysctl]\n"vm.nr_hugepages" = "{pages}"\n'
    return text


def node_user_data(
    ami_family: str, *, hugepages_2mi: str | None = None, pre_pull: Sequence[str] = ()
) -> str:
    """The EC2NodeClass ``userData`` for a pool (or one EFA type of it)."""
    if ami_family == "bottlerocket":
        return bottlerocket_user_data(hugepages_2mi=hugepages_2mi)
    return al2023_user_data(hugepages_2mi=hugepages_2mi, pre_pull=pre_pull)


def hugepages_user_data(ami_family: str, hugepages_2mi: str) -> str:
    """User data reserving 2 MiB hugepages at boot and nothing else (kept for callers of the
    earlier API; the EC2NodeClass uses ``node_user_data``)."""
    pages = hugepages_count(hugepages_2mi)
    if ami_family == "bottlerocket":
        return f'[settings.kernel.sysctl]\n"vm.nr_hugepages" = "{pages}"\n'
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n'
        "\n"
        f"--{MIME_BOUNDARY}\n" + _hugepages_part(pages) + f"--{MIME_BOUNDARY}--\n"
    )


def pre_pull_problems(images: Sequence[str], ami_family: str) -> list[tuple[tuple, str]]:
    """Problems with a pool's ``prePullImages`` (paths relative to the pool).

    Bottlerocket has no place for a pull at boot: bootstrap commands are lists of Bottlerocket
    API commands (https://bottlerocket.dev/en/os/1.54.x/api/settings/bootstrap-commands/), and
    bootstrap containers run before the kubelet starts
    (https://bottlerocket.dev/en/os/1.54.x/concepts/bootstrap-containers/), under the host's
    containerd, a separate instance from the one orchestrated pods use
    (https://bottlerocket.dev/en/os/1.54.x/concepts/components/), and cannot be superpowered
    (bottlerocket-os/bottlerocket discussion #4972, feature request #4731).
    """
    if not images:
        return []
    if ami_family == "bottlerocket":
        return [
            (
                ("pre_pull_images",),
                "is not available on bottlerocket pools: Bottlerocket runs no boot script "
                "(bootstrap commands run only Bottlerocket API commands) and its bootstrap "
                "containers run before the kubelet, in the host's own containerd, not the one "
                "pods use; use al2023 for this pool or remove the list",
            )
        ]
    out: list[tuple[tuple, str]] = []
    if len(images) > MAX_PRE_PULL_IMAGES:
        out.append(
            (
                ("pre_pull_images",),
                f"lists {len(images)} images; at most {MAX_PRE_PULL_IMAGES} (each is pulled "
                "at every node start)",
            )
        )
    seen: set[str] = set()
    for i, image in enumerate(images):
        match = re.fullmatch(IMAGE_REFERENCE, image) if len(image) <= 255 else None
        if match is None:
            out.append(
                (
                    ("pre_pull_images", i),
                    f"{image!r} is not an image reference like "
                    "'nvcr.io/nvidia/pytorch:26.05-py3@sha256:<64 hex>' or "
                    "'123456789012.dkr.ecr.us-west-2.amazonaws.com/train@sha256:<64 hex>'",
                )
            )
        elif not match.group("digest"):
            # Issue 22, Low list: a tag can be moved to other content between two boots, and
            # `ctr image pull` checks no signature; a digest is the content itself.
            out.append(
                (
                    ("pre_pull_images", i),
                    f"{image!r} has no digest; pin it by digest ('<image>@sha256:<64 hex>', "
                    "or '<image>:<tag>@sha256:<64 hex>'): a tag can point at other content at "
                    "the next boot, and may not be the image pods run",
                )
            )
        elif image in seen:
            out.append((("pre_pull_images", i), f"{image!r} is listed twice"))
        seen.add(image)
    return out
