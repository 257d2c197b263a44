"""Issue 22, point 11: the inference template's init container script, run in bash with a fake
``aws`` on PATH (it answers ``sts get-caller-identity`` with the pod's account, refuses
``s3api head-bucket`` unless ``--expected-bucket-owner`` is the bucket's owner, as S3 does with
403, and ``s3 sync`` copies a fixture directory), and the suggested S3 read policy.

Only the model directory differs from the container (``/models`` is a temporary directory here).
"""

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from eks_gpu_platform.scheduler.inference import (
    MODEL_DIR,
    MODEL_FETCH_SCRIPT,
    model_bucket,
    model_read_policy,
)

FAKE_AWS = """#!/bin/sh
case "$1 $2" in
  "sts get-caller-identity") echo "$POD_ACCOUNT" ;;
  "s3api head-bucket")
    [ "$6" = "$BUCKET_OWNER" ] && exit 0
    echo "An error occurred (403) when calling the HeadBucket operation: Forbidden" >&2
    exit 254 ;;
  "s3 sync") cp -R "$FIXTURE"/. "$4" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"""


def manifest(files: dict[str, bytes]) -> bytes:
    return b"".join(
        f"{hashlib.sha256(data).hexdigest()}  ./{name}\n".encode() for name, data in files.items()
    )


def run(tmp_path: Path, files: dict[str, bytes], *, owner="111122223333", digest=None, extra=None):
    fixture, models, bin_dir = tmp_path / "bucket", tmp_path / "models", tmp_path / "bin"
    for d in (fixture, models, bin_dir):
        d.mkdir()
    for name, data in files.items():
        (fixture / name).parent.mkdir(parents=True, exist_ok=True)
        (fixture / name).write_bytes(data)
    sums = manifest(files)
    (fixture / "SHA256SUMS").write_bytes(sums)
    for name, data in (extra or {}).items():
        (fixture / name).write_bytes(data)
    (bin_dir / "aws").write_text(FAKE_AWS)
    (bin_dir / "aws").chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "POD_ACCOUNT": "111122223333",
        "BUCKET_OWNER": owner,
        "FIXTURE": str(fixture),
        "MODEL_URI": "s3://gpu-prod-models/serve-inference/",
        "MODEL_BUCKET": "gpu-prod-models",
        "MODEL_MANIFEST_SHA256": hashlib.sha256(sums).hexdigest() if digest is None else digest,
    }
    script = MODEL_FETCH_SCRIPT.replace(MODEL_DIR, str(models))
    return subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True)


MODEL = {"resnet/config.pbtxt": b'name: "resnet"\n', "resnet/1/model.onnx": b"\x00weights"}


def test_a_model_of_this_account_matching_its_manifest_is_fetched(tmp_path):
    process = run(tmp_path, MODEL)
    assert (process.returncode, process.stderr) == (0, "")
    assert (tmp_path / "models" / "resnet" / "1" / "model.onnx").read_bytes() == b"\x00weights"


def test_a_bucket_of_another_account_is_refused(tmp_path):
    process = run(tmp_path, MODEL, owner="999988887777")
    assert process.returncode == 254
    assert "HeadBucket operation: Forbidden" in process.stderr
    assert not (tmp_path / "models" / "resnet").exists()


def test_a_manifest_other_than_the_deployments_is_refused(tmp_path):
    process = run(tmp_path, MODEL, digest="0" * 64)
    assert process.returncode == 1
    assert process.stdout == "SHA256SUMS: FAILED\n"  # GNU coreutils sha256sum -c
    assert process.stderr == "sha256sum: WARNING: 1 computed checksum did NOT match\n"


def test_a_file_not_in_the_manifest_is_refused(tmp_path):
    process = run(tmp_path, MODEL, extra={"model.py": b"import os; os.system('id')\n"})
    assert process.returncode == 1
    assert process.stderr == (
        "fetch-model: the files under s3://gpu-prod-models/serve-inference/ are not exactly "
        "those of SHA256SUMS\n"
    )


def test_a_changed_file_is_refused(tmp_path):
    files = dict(MODEL)
    process = run(tmp_path, files)
    assert process.returncode == 0
    # The manifest lists the original bytes; the bucket now serves others.
    tampered = tmp_path / "t"
    tampered.mkdir()
    sums = manifest(files)
    files["resnet/1/model.onnx"] = b"\x00other"
    process = run(tampered, files, digest=hashlib.sha256(sums).hexdigest())
    assert process.returncode == 1


def test_no_manifest_digest_fails_and_says_what_to_set(tmp_path):
    process = run(tmp_path, MODEL, digest="")
    assert process.returncode == 1
    assert process.stderr == (
        "fetch-model: MODEL_MANIFEST_SHA256 is empty; set it to the sha256 of "
        "s3://gpu-prod-models/serve-inference/SHA256SUMS\n"
    )


@pytest.mark.parametrize(
    ("uri", "bucket"),
    [("s3://gpu-prod-models/serve/", "gpu-prod-models"), ("s3://b", "b")],
)
def test_model_bucket(uri, bucket):
    assert model_bucket(uri) == bucket


def test_the_read_policy_is_bound_to_the_account_owning_the_bucket():
    assert model_read_policy(
        partition="aws", model_uri="s3://gpu-prod-models/serve/", account_id="111122223333"
    ) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ListTheModelPrefix",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": "arn:aws:s3:::gpu-prod-models",
                "Condition": {
                    "StringEquals": {"s3:ResourceAccount": "111122223333"},
                    "StringLike": {"s3:prefix": ["serve/*"]},
                },
            },
            {
                "Sid": "ReadTheModel",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::gpu-prod-models/serve/*",
                "Condition": {"StringEquals": {"s3:ResourceAccount": "111122223333"}},
            },
        ],
    }
