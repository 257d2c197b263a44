"""The stack setting ``eks-gpu-platform:validation`` (``ValidationSpec``): which validation
phases the deploy workflow runs after ``pulumi up`` on the stack, with which pools and caps
(docs/validation.md, "After `pulumi up` in CI").

The workflow reads it through ``python -m eks_gpu_platform.offline.stacks settings STACK``
(outputs ``validate-phases`` and ``validate-args``, ``validate_args`` below); an empty
``afterDeploy`` (the default) runs no validation. The pools are checked against the stack's
GPU pools with the configuration's other cross-section checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..aws import IAM_PRINCIPAL_PATTERN, IAM_SHORTHAND_PATTERN
from ..spec import Problem, Spec, doc, show
from .nccl_floor import floor_problem

# core.PHASES, in the order they run (tests/validate/test_spec.py holds them equal).
Phase = Literal["deployment", "capacity", "scheduling", "performance", "security"]
# The phases that launch nodes of the pools opted in with ``pools`` (``--pool``).
POOL_PHASES = ("capacity", "performance")


@dataclass(frozen=True, kw_only=True)
class ValidationSpec(Spec):
    """The validation the deploy workflow runs on this stack after `pulumi up`."""

    after_deploy: tuple[Phase, ...] = doc(
        (),
        "Phases the deploy workflow runs after `pulumi up` (docs/validation.md), e.g. "
        "[deployment, scheduling]; empty: none.",
    )
    pools: tuple[str, ...] = doc(
        (), "GPU pools opted in to the capacity and performance phases (`--pool`)."
    )
    cost_cap_usd: float | None = doc(
        None, "The most the run may spend on nodes, in USD (`--cost-cap-usd`; default 20)."
    )
    time_cap_minutes: float | None = doc(
        None, "The longest any one check may wait (`--time-cap-minutes`; default 30)."
    )
    nccl_floor_gbps: Mapping[str, float] = doc(
        text="A stricter NCCL all-reduce floor than NVIDIA AICR's 300 GB/s, by instance type "
        "(out-of-place bus bandwidth at 16 GiB on two nodes; docs/nccl-floor.md): p5.48xlarge, "
        "p5e.48xlarge or p5en.48xlarge, at least 300 (`--nccl-floor`).",
        default_factory=dict,
    )
    principal: str | None = doc(
        None,
        "IAM role the validation runs as: the stack gives it an EKS access entry bound to the "
        "validation's own ClusterRole (docs/validation.md, least-privilege RBAC): a role ARN "
        "or 'role/NAME'; none when unset.",
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        for i, phase in enumerate(self.after_deploy):
            if phase in self.after_deploy[:i]:
                out.append((("after_deploy", i), f"{show(phase)} is listed twice"))
        for i, pool in enumerate(self.pools):
            if pool in self.pools[:i]:
                out.append((("pools", i), f"{show(pool)} is listed twice"))
        if self.pools and not set(POOL_PHASES) & set(self.after_deploy):
            out.append(
                (
                    ("pools",),
                    "is set but afterDeploy runs neither capacity nor performance, the phases "
                    "that use it",
                )
            )
        for itype, gbps in self.nccl_floor_gbps.items():
            if problem := floor_problem(itype, gbps):
                out.append((("nccl_floor_gbps", itype), problem))
        if self.nccl_floor_gbps and "performance" not in self.after_deploy:
            out.append(
                (
                    ("nccl_floor_gbps",),
                    "is set but afterDeploy does not run performance, the phase that uses it",
                )
            )
        if self.cost_cap_usd is not None and self.cost_cap_usd < 0:
            out.append((("cost_cap_usd",), f"{show(self.cost_cap_usd)} is not a number >= 0"))
        if self.time_cap_minutes is not None and self.time_cap_minutes <= 0:
            out.append(
                (("time_cap_minutes",), f"{show(self.time_cap_minutes)} is not a number > 0")
            )
        if self.principal is not None and not _is_role(self.principal):
            out.append(
                (
                    ("principal",),
                    f"{show(self.principal)} is not an IAM role; expected an ARN such as "
                    "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME'",
                )
            )
        return out


def _is_role(principal: str) -> bool:
    """An IAM role ARN or ``role/NAME`` (a user's long-lived keys are not for CI)."""
    written = re.fullmatch(IAM_PRINCIPAL_PATTERN, principal) or re.fullmatch(
        IAM_SHORTHAND_PATTERN, principal
    )
    return bool(written) and principal.split(":")[-1].startswith("role/")


def validate_args(spec: ValidationSpec) -> tuple[str, str]:
    """The workflow's ``--phases`` value (comma-separated, "" when the stack runs none) and
    the other options of the command, space-separated (pool names, instance types and numbers
    only, so the shell may split them)."""
    args: list[str] = []
    for pool in spec.pools:
        args += ["--pool", pool]
    if spec.cost_cap_usd is not None:
        args += ["--cost-cap-usd", f"{spec.cost_cap_usd:g}"]
    if spec.time_cap_minutes is not None:
        args += ["--time-cap-minutes", f"{spec.time_cap_minutes:g}"]
    for itype, gbps in spec.nccl_floor_gbps.items():
        args += ["--nccl-floor", f"{itype}={gbps:g}"]
    return ",".join(spec.after_deploy), " ".join(args)
