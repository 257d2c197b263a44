"""Issue 22, point 2: the example workloads' images are current releases pinned by digest, and
Triton is past the releases with unauthenticated remote code execution (every release before
25.07: CVE-2025-23310, -23317, -23319; before 25.08: CVE-2025-23316)."""

import re

import pytest
from capacity_cases import stack_config

from eks_gpu_platform import versions
from eks_gpu_platform.offline.examples import example_workloads

PINNED = re.compile(r"^(?P<repo>[a-z0-9./-]+):(?P<tag>[\w.-]+)@sha256:[0-9a-f]{64}$")
IMAGES = {
    "EXAMPLE_TRAINING_IMAGE": versions.EXAMPLE_TRAINING_IMAGE,
    "EXAMPLE_INFERENCE_IMAGE": versions.EXAMPLE_INFERENCE_IMAGE,
    "EXAMPLE_MODEL_FETCH_IMAGE": versions.EXAMPLE_MODEL_FETCH_IMAGE,
}


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_every_example_image_is_a_tag_pinned_by_digest(name):
    assert PINNED.fullmatch(IMAGES[name]), IMAGES[name]


def test_triton_is_past_the_remote_code_execution_releases():
    tag = PINNED.fullmatch(versions.EXAMPLE_INFERENCE_IMAGE)["tag"]
    year, month = (int(x) for x in re.fullmatch(r"(\d\d)\.(\d\d)-py3", tag).groups())
    assert (year, month) >= (25, 8)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_rendered_template_image_has_a_digest(stack):
    config = stack_config(stack)
    images = [
        c["image"]
        for template in example_workloads(config).values()
        for document in template.documents
        for c in _containers(document)
    ]
    assert images
    for image in images:
        if "nccl-tests" in image:
            continue  # the EFA NCCL test image: AWS's, pinned by its version tag (efa/manifests.py)
        assert "@sha256:" in image, image


def _containers(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                yield from value
            else:
                yield from _containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from _containers(item)
