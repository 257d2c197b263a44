import pytest
from policy_baselines import (
    DELETE,
    EC2NODECLASS,
    change,
    compliant_stack,
    ec2nodeclass,
    props_of,
    resource,
    urn_of,
)

from eks_gpu_platform.policies.rules.gpu_operator_preinstalled_driver import RULE, check_stack

CONFIG = RULE.config()
RELEASE = "platform-gpu-operator-chart"
CLASSES = '"train-efa-p5-48xlarge", "train-efa-p5e-48xlarge", "train-spot"'


def message(key: str, shown: str, what: str) -> str:
    return (
        f'GPU Operator release "gpu-operator" has values.{key}.enabled {shown}, but every GPU '
        f"EC2NodeClass ({CLASSES}) uses an AL2023 or Bottlerocket AMI alias whose NVIDIA AMI "
        f"already ships the {what}; set {key}.enabled: false"
    )


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("values", "driver", "enabled"), True, message("driver", "true", "NVIDIA driver")),
        (
            ("values", "driver"),
            DELETE,
            message("driver", "not set (the chart defaults to true)", "NVIDIA driver"),
        ),
        (
            ("values", "toolkit", "enabled"),
            "true",
            message("toolkit", '"true"', "NVIDIA container toolkit"),
        ),
    ],
    ids=["driver-on", "driver-default", "toolkit-on"],
)
def test_operator_installs_what_the_ami_ships(path, value, expected):
    stack = compliant_stack()
    change(props_of(stack, RELEASE), path, value)
    findings = check_stack(stack, CONFIG)
    assert findings == [expected]
    assert findings[0].urn == urn_of(stack, RELEASE)


def test_bottlerocket_ships_the_driver_too():
    stack = compliant_stack()
    change(
        props_of(stack, "platform-pool-train-spot-class"),
        ("spec", "amiSelectorTerms"),
        [{"alias": "bottlerocket@v1.65.0"}],
    )
    change(props_of(stack, RELEASE), ("values", "driver", "enabled"), True)
    assert check_stack(stack, CONFIG) == [message("driver", "true", "NVIDIA driver")]


@pytest.mark.parametrize(
    "terms",
    [[{"id": "ami-0123456789abcdef0"}], [{"alias": "al2@v20250101"}], []],
    ids=["custom-ami", "al2", "no-terms"],
)
def test_a_gpu_class_with_another_ami_may_need_the_operators_driver(terms):
    stack = compliant_stack()
    change(props_of(stack, "platform-pool-train-spot-class"), ("spec", "amiSelectorTerms"), terms)
    change(props_of(stack, RELEASE), ("values", "driver", "enabled"), True)
    assert check_stack(stack, CONFIG) == []


def test_cpu_only_classes_do_not_matter():
    stack = compliant_stack()
    cpu = change(ec2nodeclass("general"), ("spec", "amiSelectorTerms"), [{"id": "ami-1"}])
    stack.append(resource(EC2NODECLASS, "platform-pool-general-class", cpu))
    change(props_of(stack, RELEASE), ("values", "driver", "enabled"), True)
    assert check_stack(stack, CONFIG) == [message("driver", "true", "NVIDIA driver")]
