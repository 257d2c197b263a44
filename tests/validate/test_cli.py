"""The command: every bad option at once (exit 2, exact messages), the dry-run plan with its
prices, a full run's reports and exit codes (fake phase modules, FakeKube)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import types

import pytest

from eks_gpu_platform.validate import cli, prices
from eks_gpu_platform.validate.core import Planned, Result

from .fake_kube import FakeKube

ALLOWED = "allowed: deployment, capacity, scheduling, performance, security"


def run(argv, capsys, **kwargs):
    out = io.StringIO()
    code = cli.main(argv, out=out, **kwargs)
    return code, out.getvalue(), capsys.readouterr().err


def test_every_bad_option_is_reported_at_once_with_exit_2(render_dir, capsys) -> None:
    code, out, err = run(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--phases",
            "deployment,bogus,gpu",
            "--cost-cap-usd",
            "-1",
            "--time-cap-minutes",
            "soon",
            "--pool",
            "gpu-spot",
            "--pool",
            "h100",
            "--run-id",
            "Run_1",
            "--kubeconfig",
            "/nonexistent/kubeconfig.json",
        ],
        capsys,
    )
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"eks-gpu-platform-validate: --phases: 'bogus' is not a phase; {ALLOWED}",
        f"eks-gpu-platform-validate: --phases: 'gpu' is not a phase; {ALLOWED}",
        "eks-gpu-platform-validate: --cost-cap-usd: '-1' is not a number >= 0",
        "eks-gpu-platform-validate: --time-cap-minutes: 'soon' is not a number > 0",
        "eks-gpu-platform-validate: --run-id: 'Run_1' is not a run id; allowed: 1 to 16 "
        "lowercase letters, digits and '-', starting and ending with a letter or digit",
        "eks-gpu-platform-validate: --kubeconfig: '/nonexistent/kubeconfig.json' is not a file",
        "eks-gpu-platform-validate: --pool: 'h100' is not a GPU pool of dev; allowed: "
        "gpu-spot, inference, notebooks",
    ]


def test_a_missing_render_says_how_to_make_it(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["--stack", "dev"], capsys)
    assert code == 2
    assert err == (
        "eks-gpu-platform-validate: no render at build/dev: run `make render STACK=dev` first\n"
    )
    code, _, err = run(["--stack", "dev", "--render", "elsewhere"], capsys)
    assert err == (
        "eks-gpu-platform-validate: --render: no render at elsewhere: run "
        "`make render STACK=dev` first\n"
    )


def test_bad_stack_name_and_dry_run_with_delete_leftovers(capsys) -> None:
    code, _, err = run(["--stack", "dev;rm", "--dry-run", "--delete-leftovers"], capsys)
    assert code == 2
    assert err.splitlines() == [
        "eks-gpu-platform-validate: --stack: 'dev;rm' is not a stack name; allowed: "
        "[A-Za-z0-9_.-]{1,100}",
        "eks-gpu-platform-validate: --delete-leftovers: not allowed with --dry-run (a dry run "
        "changes nothing)",
    ]


def test_a_phase_module_not_installed_is_a_usage_error(render_dir, capsys) -> None:
    def importer(name):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    code, _, err = run(
        ["--stack", "dev", "--render", str(render_dir("dev")), "--phases", "capacity"],
        capsys,
        importer=importer,
        kube=FakeKube(),
    )
    assert code == 2
    assert err == (
        "eks-gpu-platform-validate: --phases: 'capacity' is not available in this install "
        "(no module eks_gpu_platform.validate.capacity)\n"
    )


def test_the_module_runs_as_a_process_with_exit_2_and_no_traceback(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "eks_gpu_platform.validate", "--stack", "nope"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "eks-gpu-platform-validate: no render at build/nope: run `make render STACK=nope` first\n"
    )


def fake_phase(name, results=(), planned=()):
    module = types.ModuleType(name)
    module.NAME = name
    module.run = lambda ctx: list(results)
    module.planned = lambda ctx: list(planned)
    return module


def importer_of(*modules):
    by_name = {f"eks_gpu_platform.validate.{m.NAME}": m for m in modules}
    return lambda name: by_name[name]


def test_a_run_writes_both_reports_and_exits_1_on_a_failed_check(render_dir, tmp_path, capsys):
    phases = importer_of(
        fake_phase("deployment", [Result("deployment", "crds-served", "pass", "11 kinds served")]),
        fake_phase("scheduling", [Result("scheduling", "gang", "fail", "pending after 600 s")]),
    )
    kube = FakeKube()
    code, out, err = run(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--phases",
            "scheduling,deployment",
            "--report-dir",
            str(tmp_path / "reports"),
            "--run-id",
            "0a1b2c3d",
        ],
        capsys,
        importer=phases,
        kube=kube,
    )
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "dev: 4 passed, 1 failed, 0 skipped",
        "  fail scheduling/gang: pending after 600 s",
        f"Reports: {tmp_path / 'reports' / 'validate.xml'} {tmp_path / 'reports' / 'validate.md'}",
    ]
    md = (tmp_path / "reports" / "validate.md").read_text()
    assert md.splitlines()[2] == "dev: 4 passed, 1 failed, 0 skipped"
    assert md.index("#### deployment") < md.index("#### scheduling") < md.index("#### cleanup")
    assert kube.objects == {}


def test_a_run_with_every_check_passing_exits_0(render_dir, tmp_path, capsys):
    phases = importer_of(
        fake_phase("deployment", [Result("deployment", "crds-served", "pass", "ok")])
    )
    code, _, _ = run(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--phases",
            "deployment",
            "--report-dir",
            str(tmp_path),
        ],
        capsys,
        importer=phases,
        kube=FakeKube(),
    )
    assert code == 0


# dev is us-west-2, where the price table (prices.py) has no price: these are given with --price
PRICE_ARGS = ["--price", "g6.xlarge=0.8048", "--price", "g6.2xlarge=0.9776"]


PLANNED = [
    Planned(
        "capacity",
        "gpu-spot",
        ("Namespace validate-0a1b2c3d-research-batch", "Job validate-0a1b2c3d-research-batch/smi"),
        pool="gpu-spot",
        instance_types=("g6.xlarge", "g6.2xlarge"),
        nodes=1,
        max_minutes=30,
    ),
    Planned(
        "capacity",
        "notebooks",
        ("Job validate-0a1b2c3d-research-notebooks/smi",),
        pool="notebooks",
        instance_types=("g6.xlarge",),
        nodes=2,
        max_minutes=15,
    ),
    Planned("capacity", "listing", ()),
]


def dry_run(render_dir, capsys, extra=PRICE_ARGS, planned=PLANNED):
    kube = FakeKube()
    phases = importer_of(fake_phase("deployment"), fake_phase("capacity", planned=planned))
    code, out, err = run(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--phases",
            "deployment,capacity",
            "--run-id",
            "0a1b2c3d",
            "--dry-run",
            *extra,
        ],
        capsys,
        importer=phases,
        kube=kube,
    )
    assert (code, err) == (0, "")
    assert kube.calls == []  # no API call at all, nothing changed
    return out


def test_dry_run_prints_the_plan_with_prices_and_the_total(render_dir, capsys):
    out = dry_run(render_dir, capsys)
    assert out == (
        "Dry run of dev (run 0a1b2c3d): nothing is created.\n"
        f"Prices: {prices.SOURCE} (retrieved 2026-07-20), region us-west-2.\n"
        "User-supplied prices (--price), where the table has none: g6.xlarge $0.8048/h, "
        "g6.2xlarge $0.9776/h.\n"
        "\n"
        # The stack at full budget (issue 28, point 12), us-east-1's prices of 2026-07-20 for
        # us-west-2: gpu-spot 6 GPUs on the dearest per GPU, g6e.16xlarge (1 L40S, $7.57719):
        # 45.46314; inference 4 x g6.16xlarge (1 L4, $3.3968): 13.5872; notebooks 1 GPU (its 4
        # slices): 3.3968; system 3 x m7i.large ($0.1008): 0.3024; total 62.74954.
        "Hourly cost at full budget (on-demand Linux prices of 2026-07-20, "
        f"{prices.SOURCE}; us-west-2 has no price in the table: us-east-1's prices stand in):\n"
        "- pool gpu-spot: at most $45.4631/h (spot and reserved capacity priced at on-demand, "
        "their upper bound)\n"
        "- pool inference: at most $13.5872/h\n"
        "- pool notebooks: at most $3.3968/h\n"
        "- system node group: 3 x m7i.large: at most $0.3024/h\n"
        "- stack: at most $62.7495/h; not counted: CPU pools, the EKS control plane, NAT "
        "gateways, EBS volumes and data transfer (CPU pools here: general)\n"
        "\n"
        "deployment: reads only, creates nothing\n"
        "\n"
        "capacity:\n"
        "  gpu-spot (pool gpu-spot):\n"
        "    creates Namespace validate-0a1b2c3d-research-batch\n"
        "    creates Job validate-0a1b2c3d-research-batch/smi\n"
        "    launches up to 1 node(s) of g6.xlarge, g6.2xlarge for up to 30 min: at most $0.49 "
        "(user-supplied price)\n"
        "  notebooks (pool notebooks):\n"
        "    creates Job validate-0a1b2c3d-research-notebooks/smi\n"
        "    launches up to 2 node(s) of g6.xlarge for up to 15 min: at most $0.40 "
        "(user-supplied price)\n"
        "  listing: reads only\n"
        "\n"
        "Total: at most $0.89, within the cost cap of $20.00\n"
    )


def test_dry_run_over_the_cap_and_filtered_by_checks(render_dir, capsys):
    out = dry_run(
        render_dir, capsys, [*PRICE_ARGS, "--cost-cap-usd", "0.45", "--checks", "notebooks"]
    )
    assert "  gpu-spot (pool gpu-spot):\n" not in out
    assert out.endswith("Total: at most $0.40, within the cost cap of $0.45\n")
    out = dry_run(render_dir, capsys, [*PRICE_ARGS, "--cost-cap-usd", "0.25"])
    assert out.endswith("Total: at most $0.89, over the cost cap of $0.25\n")


def test_dry_run_with_an_unpriced_type(render_dir, capsys):
    planned = [*PLANNED, Planned("capacity", "p5", (), "train", ("p5.48xlarge",), 1, 10)]
    out = dry_run(render_dir, capsys, planned=planned)
    assert (
        "    launches up to 1 node(s) of p5.48xlarge for up to 10 min: no price (the source "
        "holds us-east-1 prices only and the AWS price list could not be fetched)\n"
    ) in out
    # Beside it, us-east-1's prices (issue 28, point 12): 1 x g6.2xlarge $0.9776 x 0.5 h +
    # 2 x g6.xlarge $0.8048 x 0.25 h + 1 x p5.48xlarge $55.04 x 1/6 h = 10.0645.
    assert out.endswith(
        "Total: unknown (a type has no price in us-west-2; at us-east-1's prices at most "
        "$10.06); cost cap $20.00\n"
    )
    # without --price, dev's region has no price at all
    out = dry_run(render_dir, capsys, [])
    assert "User-supplied" not in out
    assert "    launches up to 2 node(s) of g6.xlarge for up to 15 min: no price (" in out


def test_bad_price_options_exit_2_with_every_problem(render_dir, capsys):
    code, out, err = run(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--dry-run",
            "--price",
            "g6.xlarge",
            "--price",
            "g6.xlargee=1",
            "--price",
            "m5.large=0.1",
            "--price",
            "g6.2xlarge=-1",
            "--price",
            "g6.4xlarge=nan",
            "--price",
            "g6.12xlarge=4.6",
            "--price",
            "g6.12xlarge=4.7",
        ],
        capsys,
    )
    assert (code, out) == (2, "")
    prefix = "eks-gpu-platform-validate: --price: "
    assert err.splitlines() == [
        f"{prefix}'g6.xlarge' is not INSTANCE_TYPE=USD_PER_HOUR, e.g. g6.xlarge=0.81",
        f"{prefix}'g6.xlargee' is not a GPU instance type of the catalog; did you mean "
        "'g6.xlarge'?",
        f"{prefix}'m5.large' is not a GPU instance type of the catalog; did you mean 'g5.xlarge'?",
        f"{prefix}g6.2xlarge: '-1' is not a number of US dollars per hour > 0",
        f"{prefix}g6.4xlarge: 'nan' is not a number of US dollars per hour > 0",
        f"{prefix}g6.12xlarge is given more than once",
    ]


def test_a_price_the_table_has_is_not_overridden(render_dir, capsys, tmp_path):
    render = tmp_path / "dev"
    shutil.copytree(render_dir("dev"), render)
    outputs = render / "outputs.json"
    outputs.write_text(outputs.read_text().replace("us-west-2", "us-east-1"))
    code, out, err = run(
        ["--stack", "dev", "--render", str(render), "--dry-run", "--price", "g6.xlarge=0.5"],
        capsys,
    )
    assert (code, out) == (2, "")
    assert err == (
        "eks-gpu-platform-validate: --price: g6.xlarge: the price table has $0.8048/h for it in "
        "us-east-1 (retrieved 2026-07-20); --price is only for a type it has no price for\n"
    )


def test_a_run_records_the_user_supplied_prices_in_both_reports(render_dir, tmp_path, capsys):
    phases = importer_of(
        fake_phase("deployment", [Result("deployment", "crds-served", "pass", "ok")])
    )
    argv = ["--stack", "dev", "--render", str(render_dir("dev")), "--phases", "deployment"]
    code, _, _ = run(
        [*argv, "--report-dir", str(tmp_path), "--price", "g6.xlarge=0.81"],
        capsys,
        importer=phases,
        kube=FakeKube(),
    )
    assert code == 0
    note = (
        "Price of g6.xlarge in us-west-2: $0.81/h, user-supplied (--price); the table "
        "(2026-07-20) has none"
    )
    assert f"\n- {note}\n" in (tmp_path / "validate.md").read_text()
    assert f'<property name="note.1" value="{note}" />' in (tmp_path / "validate.xml").read_text()


def test_prices_reach_the_options(render_dir):
    ns = cli.parser().parse_args(
        ["--stack", "dev", "--render", str(render_dir("dev")), *PRICE_ARGS]
    )
    assert cli.check_args(ns).options.prices == {"g6.xlarge": 0.8048, "g6.2xlarge": 0.9776}


@pytest.mark.parametrize("value", ["0", "2.5"])
def test_caps_reach_the_options(render_dir, capsys, value) -> None:
    ns = cli.parser().parse_args(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--time-cap-minutes",
            "2",
            "--cost-cap-usd",
            value,
            "--pool",
            "gpu-spot",
            "--pool",
            "gpu-spot",
        ]
    )
    args = cli.check_args(ns)
    assert (args.options.cost_cap_usd, args.options.time_cap_s) == (float(value), 120.0)
    assert args.options.pools == ("gpu-spot",)
    assert args.options.phases == ("deployment", "scheduling", "security")
    assert len(args.run_id) == 8 and set(args.run_id) <= set("0123456789abcdef")


def test_checks_selecting_nothing_exit_2_naming_the_checks(render_dir, capsys):
    # A mistyped --checks must not be a green run of nothing (review M4): exit 2 before any API
    # call, naming the render's checks of the chosen phases.
    kube = FakeKube()
    code, out, err = run(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--phases",
            "scheduling",
            "--checks",
            "do-not-disrup/*",
            "--checks",
            "scheduling/gang",
        ],
        capsys,
        kube=kube,
    )
    assert (code, out) == (2, "")
    assert err == (
        "eks-gpu-platform-validate: --checks do-not-disrup/*, scheduling/gang selects no check "
        "of the phases scheduling; the checks of this render are: "
        "scheduling/do-not-disrupt/research-batch, scheduling/do-not-disrupt/research-notebooks, "
        "scheduling/do-not-disrupt/research-serving, scheduling/system-pods-not-annotated, "
        "scheduling/kai-pods-in-queue-namespaces, scheduling/gang-all-or-nothing, "
        "scheduling/over-limit-stays-pending\n"
    )
    assert kube.calls == []


def test_checks_selecting_nothing_exit_2_in_a_dry_run_too(render_dir, capsys):
    phases = importer_of(fake_phase("capacity", planned=PLANNED))
    code, out, err = run(
        [
            *("--stack", "dev", "--render", str(render_dir("dev")), "--phases", "capacity"),
            *("--dry-run", "--checks", "capacity/gpu-spto"),
        ],
        capsys,
        importer=phases,
        kube=FakeKube(),
    )
    assert (code, out) == (2, "")
    assert err == (
        "eks-gpu-platform-validate: --checks capacity/gpu-spto selects no check of the phases "
        "capacity; the checks of this render are: capacity/gpu-spot, capacity/notebooks, "
        "capacity/listing\n"
    )
