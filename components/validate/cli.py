"""``python -m eks_gpu_platform.validate`` (console script ``eks-gpu-platform-validate``,
``make validate STACK=...``): validate a deployed stack's cluster against the stack's render.

Exit codes: 0 no check failed; 1 a check failed; 2 bad usage or input (every problem at once,
each naming the option, the bad value and what is allowed), a missing render, an unreadable
kubeconfig or a missing Kubernetes client. ``--dry-run`` prints what ``dry_run.py`` plans and
changes nothing.
"""

from __future__ import annotations

import argparse
import math
import re
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .. import catalog
from ..errors import did_you_mean
from . import nccl_floor, report, runner
from . import prices as prices_mod
from . import render as render_mod
from .core import PHASES, Context, KubeError, Options, Render
from .dry_run import print_plan

DEFAULT_PHASES = ("deployment", "scheduling", "security")
STACK_RE = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
RUN_ID_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$")


class UsageError(Exception):
    """Bad options: one line per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="eks-gpu-platform-validate",
        description="Validate a deployed stack's cluster against the stack's render "
        "(docs/validation.md).",
    )
    p.add_argument("--stack", required=True, help="the stack (its render is build/<stack>/)")
    p.add_argument("--render", help="the render's folder (default build/<stack>)")
    p.add_argument("--kubeconfig", help="kubeconfig file, JSON or YAML (default $KUBECONFIG)")
    p.add_argument("--context", help="the kubeconfig context (default its current context)")
    p.add_argument(
        "--phases",
        default=",".join(DEFAULT_PHASES),
        help=f"comma-separated, of {', '.join(PHASES)} (default %(default)s)",
    )
    p.add_argument(
        "--pool",
        action="append",
        default=[],
        help="a GPU pool opted in to the capacity and performance phases (repeatable)",
    )
    p.add_argument(
        "--checks",
        action="append",
        default=[],
        help="run only the checks matching this glob, by name or <phase>/<name> (repeatable)",
    )
    p.add_argument("--cost-cap-usd", default="20", help="the most the run may spend on nodes")
    p.add_argument("--time-cap-minutes", default="30", help="the longest any one check may wait")
    p.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="INSTANCE_TYPE=USD_PER_HOUR",
        help="the hourly price of a type the price table has none for in the stack's region "
        "(repeatable); reported as user-supplied",
    )
    p.add_argument(
        "--nccl-floor",
        action="append",
        default=[],
        metavar="INSTANCE_TYPE=GBPS",
        help="a stricter NCCL all-reduce floor than NVIDIA AICR's for a type it covers "
        "(repeatable; docs/nccl-floor.md)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: print what each phase would create and what it could cost",
    )
    p.add_argument("--report-dir", help="where validate.xml and validate.md go")
    p.add_argument("--run-id", help="the run's id (default 8 random lowercase hex digits)")
    p.add_argument(
        "--delete-leftovers",
        action="store_true",
        help="delete objects of older runs found by the pre-flight",
    )
    return p


@dataclass(frozen=True)
class Args:
    options: Options
    render: Render
    kubeconfig: str | None
    context: str | None
    report_dir: Path
    run_id: str
    delete_leftovers: bool


def _number(problems: list[str], option: str, text: str, minimum: float, strict: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value or value < minimum or (strict and value == minimum):
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        problems.append(f"{option}: {text!r} is not a number {bound}")
        return 0.0
    return value


def user_prices(problems: list[str], given: Sequence[str], region: str | None) -> dict[str, float]:
    """``--price INSTANCE_TYPE=USD_PER_HOUR`` options: a catalog type, a finite number > 0, each
    type once, and only a type the table has no price for in ``region`` (a table price is
    never overridden)."""
    out: dict[str, float] = {}
    for text in given:
        itype, sep, usd = (part.strip() for part in text.partition("="))
        if not sep or not itype or not usd:
            problems.append(
                f"--price: {text!r} is not INSTANCE_TYPE=USD_PER_HOUR, e.g. g6.xlarge=0.81"
            )
            continue
        if itype not in catalog.INSTANCE_TYPES:
            problems.append(
                f"--price: {itype!r} is not a GPU instance type of the catalog"
                f"{did_you_mean(itype, catalog.INSTANCE_TYPES)}"
            )
            continue
        try:
            value = float(usd)
        except ValueError:
            value = float("nan")
        if not math.isfinite(value) or value <= 0:
            problems.append(f"--price: {itype}: {usd!r} is not a number of US dollars per hour > 0")
            continue
        if itype in out:
            problems.append(f"--price: {itype} is given more than once")
            continue
        table = prices_mod.hourly_usd(region or "", itype)
        if table is not None:
            problems.append(
                f"--price: {itype}: the price table has ${table:g}/h for it in {region} "
                f"(retrieved {prices_mod.RETRIEVED}); --price is only for a type it has no "
                "price for"
            )
            continue
        out[itype] = value
    return out


def nccl_floors(problems: list[str], given: Sequence[str]) -> dict[str, float]:
    """``--nccl-floor INSTANCE_TYPE=GBPS`` options: a type with a published floor, raised, each
    type once (``nccl_floor.floor_problem``)."""
    out: dict[str, float] = {}
    for text in given:
        itype, sep, gbps = (part.strip() for part in text.partition("="))
        try:
            value = float(gbps)
        except ValueError:
            value = float("nan")
        if not sep or not itype or value != value:
            problems.append(
                f"--nccl-floor: {text!r} is not INSTANCE_TYPE=GBPS, e.g. p5.48xlarge=400"
            )
        elif problem := nccl_floor.floor_problem(itype, value):
            problems.append(f"--nccl-floor: {problem}")
        elif itype in out:
            problems.append(f"--nccl-floor: {itype} is given more than once")
        else:
            out[itype] = value
    return out


def gpu_pools(render: Render) -> list[str]:
    pools = render.capacity.get("pools", [])
    if isinstance(pools, dict):
        return sorted(pools)
    return [p["name"] for p in pools if isinstance(p, dict) and "name" in p]


def check_args(ns: argparse.Namespace) -> Args:
    """Every problem of the options at once (``UsageError``), or the run's inputs."""
    problems: list[str] = []
    if not STACK_RE.match(ns.stack):
        problems.append(
            f"--stack: {ns.stack!r} is not a stack name; allowed: [A-Za-z0-9_.-]{{1,100}}"
        )
    phases = [p.strip() for p in ns.phases.split(",") if p.strip()]
    for phase in phases:
        if phase not in PHASES:
            problems.append(f"--phases: {phase!r} is not a phase; allowed: {', '.join(PHASES)}")
    if not phases:
        problems.append(f"--phases: {ns.phases!r} names no phase; allowed: {', '.join(PHASES)}")
    cost = _number(problems, "--cost-cap-usd", ns.cost_cap_usd, 0.0, strict=False)
    minutes = _number(problems, "--time-cap-minutes", ns.time_cap_minutes, 0.0, strict=True)
    floors = nccl_floors(problems, ns.nccl_floor)
    if ns.run_id is not None and not RUN_ID_RE.match(ns.run_id):
        problems.append(
            f"--run-id: {ns.run_id!r} is not a run id; allowed: 1 to 16 lowercase letters, "
            "digits and '-', starting and ending with a letter or digit"
        )
    if ns.kubeconfig is not None and not Path(ns.kubeconfig).is_file():
        problems.append(f"--kubeconfig: {ns.kubeconfig!r} is not a file")
    if ns.dry_run and ns.delete_leftovers:
        problems.append(
            "--delete-leftovers: not allowed with --dry-run (a dry run changes nothing)"
        )
    loaded: Render | None = None
    if STACK_RE.match(ns.stack):
        try:
            loaded = render_mod.load(ns.stack, ns.render)
        except render_mod.RenderError as exc:
            problems.append(f"--render: {exc}" if ns.render else str(exc))
    if loaded is not None:
        allowed = gpu_pools(loaded)
        for pool in ns.pool:
            if pool not in allowed:
                problems.append(
                    f"--pool: {pool!r} is not a GPU pool of {ns.stack}; allowed: "
                    f"{', '.join(allowed) or 'none'}"
                )
        supplied = user_prices(problems, ns.price, loaded.region)
    if problems or loaded is None:
        raise UsageError(problems)
    options = Options(
        stack=ns.stack,
        phases=tuple(p for p in PHASES if p in phases),
        pools=tuple(dict.fromkeys(ns.pool)),
        cost_cap_usd=cost,
        time_cap_s=minutes * 60.0,
        dry_run=ns.dry_run,
        checks=tuple(ns.checks),
        prices=supplied,
        nccl_floors=floors,
    )
    return Args(
        options=options,
        render=loaded,
        kubeconfig=ns.kubeconfig,
        context=ns.context,
        report_dir=Path(ns.report_dir) if ns.report_dir else Path("build") / "validate" / ns.stack,
        run_id=ns.run_id or secrets.token_hex(4),
        delete_leftovers=ns.delete_leftovers,
    )


class OfflineKube:
    """The Kube of a dry run: every call is an error (a phase's ``planned`` reads the render
    only)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def _fail(self, *args, **kwargs):
        raise KubeError(0, "Offline", self.why)

    served = get = list = create = delete = logs = _fail


def make_kube(args: Args):
    """The cluster client (``kube.ClientKube``); raises ``UsageError`` when it cannot be had."""
    try:
        from .kube import ClientKube, KubeConfigError
    except ImportError as exc:  # the kubernetes package is the `validate` extra
        raise UsageError(
            [
                f"the validation needs the Kubernetes client ({exc}): "
                "pip install 'eks-gpu-platform[validate]' (or -r requirements.txt)"
            ]
        ) from exc
    try:
        return ClientKube(args.kubeconfig, args.context)
    except KubeConfigError as exc:
        raise UsageError([str(exc)]) from exc


def price_notes(ctx: Context) -> list[str]:
    """The report's record of the ``--price`` prices (none when not given)."""
    return [
        f"Price of {itype} in {ctx.render.region or 'unknown'}: ${usd:g}/h, user-supplied "
        f"(--price); the table ({prices_mod.RETRIEVED}) has none"
        for itype, usd in ctx.options.prices.items()
    ]


def _load(names: Sequence[str], importer) -> list[ModuleType]:
    missing = []
    for name in names:
        try:
            importer(runner.module_name(name))
        except ModuleNotFoundError as exc:
            if exc.name != runner.module_name(name):
                raise
            missing.append(
                f"--phases: {name!r} is not available in this install (no module {exc.name})"
            )
    if missing:
        raise UsageError(missing)
    return runner.load_phases(names, importer)


def main(argv: Sequence[str] | None = None, *, importer=None, kube=None, out=None) -> int:
    """The command; ``importer`` (phase modules) and ``kube`` are the tests' seams."""
    out = out or sys.stdout
    try:
        ns = parser().parse_args(argv)
        args = check_args(ns)
        phases = _load(args.options.phases, importer or runner.importlib.import_module)
        if kube is None:
            # A dry run plans from the render alone: it never talks to the cluster.
            kube = OfflineKube("a dry run makes no API call") if ns.dry_run else make_kube(args)
    except UsageError as exc:
        for problem in exc.problems:
            print(f"eks-gpu-platform-validate: {problem}", file=sys.stderr)
        return 2
    ctx = Context(
        kube=kube,
        render=args.render,
        options=args.options,
        run_id=args.run_id,
        namespace=runner.run_namespace(args.run_id),
    )
    problem = runner.selection_problem(ctx, phases)
    if problem is not None:
        print(f"eks-gpu-platform-validate: {problem}", file=sys.stderr)
        return 2
    if args.options.dry_run:
        print_plan(ctx, phases, out)
        return 0
    results = runner.run(ctx, phases, delete_leftovers=args.delete_leftovers)
    xml_path, md_path = report.write(
        args.report_dir, args.options.stack, args.run_id, results, price_notes(ctx)
    )
    print(report.headline(args.options.stack, results), file=out)
    for r in results:
        if r.status != "pass":
            print(f"  {r.status} {r.phase}/{r.name}: {r.reason}", file=out)
    print(f"Reports: {xml_path} {md_path}", file=out)
    return runner.exit_code(results)
