"""Node-start levers in the EC2NodeClasses' user data (nodepool/userdata.py): parallel image
pulls with registry QPS/burst on every node class, the instance-store RAID0 that holds containerd
and the kubelet, and pre-pulled images; each upstream behaviour pinned on a cited fact
(``tests/upstream_facts/node_bootstrap.py``) or Karpenter's bootstrap code, read from its Go
module (``tests/upstream_modules.py``).
"""

import email
import tomllib

import pytest
import yaml
from upstream_facts import node_bootstrap as facts
from upstream_modules import karpenter_file

from eks_gpu_platform.nodepool import userdata
from eks_gpu_platform.spec import SpecError

from .pools import (
    AL2023_USER_DATA,
    BOTTLEROCKET_USER_DATA,
    KEY,
    MANIFESTS,
    ON_DEMAND,
    class_manifest,
    spec,
)

NODE_CONFIG = {
    "apiVersion": "node.eks.aws/v1alpha1",
    "kind": "NodeConfig",
    "spec": {
        "kubelet": {
            "config": {
                "serializeImagePulls": False,
                "maxParallelImagePulls": 10,
                "registryPullQPS": 20,
                "registryBurst": 40,
            }
        }
    },
}
PYTORCH = "nvcr.io/nvidia/pytorch:26.05-py3@sha256:" + "cd" * 32
ECR = "123456789012.dkr.ecr.us-west-2.amazonaws.com/train@sha256:" + "ab" * 32


def karpenter_bootstrap(name: str) -> str:
    """``pkg/providers/amifamily/bootstrap/<name>.go`` of github.com/aws/karpenter-provider-aws at
    the conformance suite's v1.15.0, byte-identical to v1.15.1's (tests/upstream_modules.py)."""
    return karpenter_file(f"pkg/providers/amifamily/bootstrap/{name}.go").read_text()


def mime_parts(text: str) -> list[tuple[str, str]]:
    """(content type, body) of each part, as cloud-init and Karpenter's MIME reader see them."""
    message = email.message_from_string(text)
    assert message.is_multipart()
    return [(p.get_content_type(), p.get_payload()) for p in message.get_payload()]


# --- parallel pulls on every node class ---------------------------------------------------------


def test_al2023_user_data_is_one_nodeconfig_part():
    assert userdata.al2023_user_data() == AL2023_USER_DATA
    [(content_type, body)] = mime_parts(AL2023_USER_DATA)
    assert content_type == "application/node.eks.aws"
    assert yaml.safe_load(body) == NODE_CONFIG


def test_bottlerocket_user_data_raises_registry_qps_and_burst_only():
    assert userdata.bottlerocket_user_data() == BOTTLEROCKET_USER_DATA
    assert tomllib.loads(BOTTLEROCKET_USER_DATA) == {
        "settings": {"kubernetes": {"registry-qps": 20, "registry-burst": 40}}
    }


@pytest.mark.parametrize("name", sorted(k for k in MANIFESTS if k.endswith("/EC2NodeClass")))
def test_every_ec2nodeclass_turns_on_parallel_pulls(name):
    node_spec = MANIFESTS[name]()["spec"]
    text = node_spec["userData"]
    if node_spec["amiSelectorTerms"][0]["alias"].startswith("bottlerocket@"):
        kubernetes = tomllib.loads(text)["settings"]["kubernetes"]
        assert kubernetes == {"registry-qps": 20, "registry-burst": 40}
    else:
        configs = [
            yaml.safe_load(b) for t, b in mime_parts(text) if t == "application/node.eks.aws"
        ]
        assert configs == [NODE_CONFIG]


def test_the_nodeconfig_fields_are_nodeadm_and_kubelet_fields():
    """nodeadm takes ``spec.kubelet.config`` as a KubeletConfiguration to merge; each key the
    NodeConfig sets is a field of k8s.io/kubelet/config/v1beta1 (vendored in nodeadm)."""
    spec, kubelet, config = facts.NODECONFIG_KUBELET_CONFIG_PATH.value
    settings = NODE_CONFIG[spec][kubelet][config]
    assert set(settings) == set(facts.KUBELET_PULL_FIELDS)
    # The kubelet's defaults the levers raise, and the rule the bound obeys: a bound only
    # with parallel pulls (the default is serial).
    defaults = {key: fact.value for key, fact in facts.KUBELET_PULL_FIELDS.items()}
    assert defaults == {
        "serializeImagePulls": True,
        "maxParallelImagePulls": None,
        "registryPullQPS": 5,
        "registryBurst": 10,
    }
    assert settings["serializeImagePulls"] is False
    assert settings["registryPullQPS"] > defaults["registryPullQPS"]
    assert settings["registryBurst"] > defaults["registryBurst"]


def test_karpenter_keeps_the_user_parts_before_its_own_nodeconfig():
    """Karpenter v1.15.1 appends its NodeConfig after the user's parts; its values win only for
    the fields it sets (cluster, taints, labels, ``spec.kubelet``), none of the pull settings."""
    nodeadm = karpenter_bootstrap("nodeadm")
    assert (
        "mimeArchive := mime.Archive(append(customEntries, mime.Entry{\n"
        "\t\tContentType: mime.ContentTypeNodeConfig,\n"
        "\t\tContent:     nodeConfigYAML,\n"
        "\t}))"
    ) in nodeadm
    generated = nodeadm[nodeadm.index("func (n Nodeadm) getNodeConfigYAML()") :]
    for key in NODE_CONFIG["spec"]["kubelet"]["config"]:
        assert key not in generated


def test_bottlerocket_pulls_in_parallel_already_and_karpenter_keeps_qps_and_burst():
    assert facts.BOTTLEROCKET_SERIALIZE_IMAGE_PULLS.value is False
    # The settings our user data writes are the ones Bottlerocket's kubelet template reads.
    written = tomllib.loads(BOTTLEROCKET_USER_DATA)["settings"]["kubernetes"]
    read = {fact.value for fact in facts.BOTTLEROCKET_PULL_SETTINGS.values()}
    assert set(written) == read == {"registry-qps", "registry-burst"}
    settings = karpenter_bootstrap("bottlerocketsettings")
    assert '`toml:"registry-qps,omitempty"`' in settings
    assert '`toml:"registry-burst,omitempty"`' in settings
    # Why the bound is not set on Bottlerocket: Karpenter rebuilds settings.kubernetes from its
    # typed struct, which has no max-parallel-image-pulls, so the setting would be dropped.
    assert 'c.SettingsRaw["kubernetes"] = c.Settings.Kubernetes' in settings
    # (The setting exists from Bottlerocket 1.51: https://bottlerocket.dev/en/os/1.54.x/api/settings/kubernetes/)
    assert "max-parallel-image-pulls" not in settings


# --- instance-store NVMe: containerd and the kubelet on RAID0 ----------------------------------


def test_gpu_node_classes_put_containerd_and_the_kubelet_on_the_instance_store_raid0():
    classes = {k: MANIFESTS[k]()["spec"] for k in MANIFESTS if k.endswith("/EC2NodeClass")}
    raid0 = sorted(k for k, s in classes.items() if s.get("instanceStorePolicy") == "RAID0")
    assert raid0 == sorted(k for k in classes if not k.startswith(("cpu/", "default-cpu/")))


def test_al2023_raid0_binds_kubelet_and_containerd_through_nodeadm():
    """Karpenter's RAID0 -> NodeConfig localStorage RAID0 -> ``setup-local-disks raid0`` ->
    /dev/md/kubernetes at /mnt/k8s-disks/0, bind-mounted over the kubelet and containerd dirs."""
    karpenter = karpenter_bootstrap("nodeadm")
    assert (
        "if lo.FromPtr(n.InstanceStorePolicy) == v1.InstanceStorePolicyRAID0 {\n"
        "\t\tconfig.Spec.Instance.LocalStorage.Strategy = admv1alpha1.LocalStorageRAID0"
    ) in karpenter
    # nodeadm's strategy value, lower-cased, is setup-local-disks' mode.
    assert facts.LOCAL_STORAGE_RAID0.value.lower() == facts.SETUP_LOCAL_DISKS_COMMAND.value[1]
    # What the module says the array is, where it is mounted and what is bound onto it.
    claims = " ".join(userdata.__doc__.split())
    command = " ".join(facts.SETUP_LOCAL_DISKS_COMMAND.value)
    for fact in (command, facts.RAID_DEVICE.value, facts.RAID_MOUNT_POINT.value):
        assert f"``{fact}``" in claims, fact
    assert set(facts.RAID_BIND_MOUNTS.value) == {"/var/lib/kubelet", "/var/lib/containerd"}
    for path in facts.RAID_BIND_MOUNTS.value:
        assert f"``{path}``" in claims, path


def test_bottlerocket_raid0_binds_kubelet_and_containerd_through_apiclient():
    karpenter = karpenter_bootstrap("bottlerocket")
    assert (
        'bindCmd = []string{"apiclient", "ephemeral-storage", "bind", "--dirs", '
        '"/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"}'
    ) in karpenter
    assert 'Commands:  [][]string{{"apiclient", "ephemeral-storage", "init"}, bindCmd},' in (
        karpenter
    )


# --- pre-pulled images ----------------------------------------------------------------------


def test_pre_pull_user_data_exactly():
    text = userdata.al2023_user_data(pre_pull=[PYTORCH, ECR])
    parts = mime_parts(text)
    assert [t for t, _ in parts] == ["application/node.eks.aws", "text/x-shellscript"]
    assert parts[1][1] == (
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "# Pre-pull this pool's images into the kubelet's containerd namespace once it runs.\n"
        "cat > /usr/local/bin/eks-gpu-platform-pre-pull <<'SCRIPT'\n"
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
        "chmod 0755 /usr/local/bin/eks-gpu-platform-pre-pull\n"
        "cat > /etc/systemd/system/eks-gpu-platform-pre-pull.service <<'UNIT'\n"
        "[Unit]\n"
        "Description=Pre-pull this node pool's container images\n"
        "After=nodeadm-run.service containerd.service\n"
        "Wants=containerd.service\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart=/usr/local/bin/eks-gpu-platform-pre-pull '{PYTORCH}' '{ECR}'\n"
        "UNIT\n"
        "systemctl daemon-reload\n"
        # The last newline belongs to the MIME delimiter.
        "systemctl start --no-block eks-gpu-platform-pre-pull.service"
    )


def test_the_pre_pull_unit_starts_after_nodeadm_run_which_starts_after_user_scripts():
    """User scripts run in cloud-final; nodeadm-run (containerd, kubelet) waits for it, and the
    pre-pull unit waits for nodeadm-run. The pull is the AMI's own way of caching an image."""
    assert "cloud-final.service" in facts.NODEADM_RUN_AFTER.value
    _, (_, script) = mime_parts(userdata.al2023_user_data(pre_pull=[ECR]))
    assert "After=nodeadm-run.service containerd.service\n" in script
    # The same pull as the AMI's: ctr in the kubelet's namespace, ECR login as user AWS.
    assert f"ctr --namespace {facts.CTR_PULL_NAMESPACE.value} image pull" in script
    assert 'args=(--user "AWS:$(aws ecr get-login-password --region "$region")")' in script
    assert facts.ECR_PULL_USER.value == "AWS:$(aws ecr get-login-password)"


def test_a_pool_with_pre_pull_images_renders_them_after_its_nodeconfig():
    node_spec = class_manifest({**ON_DEMAND, "prePullImages": [PYTORCH]})["spec"]
    parts = mime_parts(node_spec["userData"])
    assert [t for t, _ in parts] == ["application/node.eks.aws", "text/x-shellscript"]
    assert f"ExecStart=/usr/local/bin/eks-gpu-platform-pre-pull '{PYTORCH}'\n" in parts[1][1]


def test_efa_pool_parts_are_nodeconfig_hugepages_then_pre_pull():
    text = userdata.al2023_user_data(hugepages_2mi="5120Mi", pre_pull=[PYTORCH])
    parts = mime_parts(text)
    assert [t for t, _ in parts] == [
        "application/node.eks.aws",
        "text/x-shellscript",
        "text/x-shellscript",
    ]
    assert 'echo "vm.nr_hugepages = 2560"' in parts[1][1]
    assert "eks-gpu-platform-pre-pull" in parts[2][1]


@pytest.mark.parametrize(
    "image",
    [
        "ubuntu@sha256:" + "1" * 64,
        PYTORCH,
        ECR,
        "localhost:5000/team/model:v1@sha256:" + "2" * 64,
        "public.ecr.aws/neuron/pytorch-training@sha256:" + "0" * 64,
    ],
)
def test_valid_pre_pull_images(image):
    assert spec({**ON_DEMAND, "prePullImages": [image]}).pre_pull_images == (image,)


def errors(raw: dict) -> list[str]:
    with pytest.raises(SpecError) as err:
        spec(raw)
    return err.value.lines


def test_pre_pull_images_problems_all_at_once():
    raw = {**ON_DEMAND, "prePullImages": ["ubuntu", "Bad:1", "a b:1", "x';rm -rf /:1", PYTORCH]}
    raw["prePullImages"].append(PYTORCH)
    example = (
        "is not an image reference like 'nvcr.io/nvidia/pytorch:26.05-py3@sha256:<64 hex>' or "
        "'123456789012.dkr.ecr.us-west-2.amazonaws.com/train@sha256:<64 hex>'"
    )
    assert errors(raw) == [
        f"{KEY}.prePullImages[0]: 'ubuntu' has no digest; pin it by digest "
        "('<image>@sha256:<64 hex>', or '<image>:<tag>@sha256:<64 hex>'): a tag can point at "
        "other content at the next boot, and may not be the image pods run",
        f"{KEY}.prePullImages[1]: 'Bad:1' {example}",
        f"{KEY}.prePullImages[2]: 'a b:1' {example}",
        f'{KEY}.prePullImages[3]: "x\';rm -rf /:1" {example}',
        f"{KEY}.prePullImages[5]: {PYTORCH!r} is listed twice",
    ]


@pytest.mark.parametrize(
    "image", ["nvcr.io/nvidia/pytorch:latest", "nvcr.io/nvidia/pytorch:26.05-py3", "ubuntu:22.04"]
)
def test_pre_pull_images_need_a_digest(image):
    # Issue 22, Low list: ':latest' (or any tag alone) passed before.
    assert errors({**ON_DEMAND, "prePullImages": [image]}) == [
        f"{KEY}.prePullImages[0]: {image!r} has no digest; pin it by digest "
        "('<image>@sha256:<64 hex>', or '<image>:<tag>@sha256:<64 hex>'): a tag can point at "
        "other content at the next boot, and may not be the image pods run"
    ]


def test_pre_pull_images_at_most_ten():
    images = [f"nvcr.io/nvidia/pytorch:25.{i:02d}-py3@sha256:" + "a" * 64 for i in range(11)]
    assert errors({**ON_DEMAND, "prePullImages": images}) == [
        f"{KEY}.prePullImages: lists 11 images; at most 10 (each is pulled at every node start)"
    ]


def test_pre_pull_images_are_refused_on_bottlerocket():
    raw = {**ON_DEMAND, "ami": {"family": "bottlerocket"}, "prePullImages": [PYTORCH]}
    assert errors(raw) == [
        f"{KEY}.prePullImages: is not available on bottlerocket pools: Bottlerocket runs no boot "
        "script (bootstrap commands run only Bottlerocket API commands) and its bootstrap "
        "containers run before the kubelet, in the host's own containerd, not the one pods use; "
        "use al2023 for this pool or remove the list"
    ]


def test_no_pre_pull_by_default():
    assert spec(ON_DEMAND).pre_pull_images == ()
    assert class_manifest(ON_DEMAND)["spec"]["userData"] == AL2023_USER_DATA
