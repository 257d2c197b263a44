import pytest
from policy_baselines import change, ec2nodeclass

from eks_gpu_platform.policies.rules.ami_version_pinned import RULE, check

CONFIG = RULE.config()
TERMS = ("spec", "amiSelectorTerms")


def test_baseline_is_compliant():
    assert check(ec2nodeclass(), CONFIG) == []


def test_terms_without_alias_are_not_this_rules_concern():
    assert check(change(ec2nodeclass(), TERMS, [{"id": "ami-0123456789abcdef0"}]), CONFIG) == []


@pytest.mark.parametrize(
    ("alias", "example"),
    [("al2023@latest", "al2023@v20260903"), ("bottlerocket@latest", "bottlerocket@v1.65.0")],
)
def test_latest(alias, example):
    assert check(change(ec2nodeclass(), TERMS, [{"alias": alias}]), CONFIG) == [
        f'EC2NodeClass "inference" selects AMI alias "{alias}"; @latest drifts and replaces '
        f'every node on each AMI release, so pin a version such as "{example}"'
    ]


def test_windows_only_accepts_latest():
    assert check(change(ec2nodeclass(), TERMS, [{"alias": "windows2022@latest"}]), CONFIG) == []
