"""The project's stacks are its ``Pulumi.<stack>.yaml`` files: discovered, never listed.

The replacement-safety snapshots (``make snapshot``), the test suite and both GitHub workflows
take the stack set from here, so adding a stack is adding ``Pulumi.<name>.yaml`` (then
``make snapshot`` to record its snapshot): nothing else lists stack names.

Deploy order (``main.yml``): ``dev`` first, then every other stack (in parallel), ``prod`` last;
each wave starts only when the one before succeeded. A stack set without ``dev`` or ``prod``
just has an empty first or last wave.

The GitHub workflows call this module as a command:

- ``python components/offline/stacks.py matrix``: the stacks as JSON lists, in
  ``$GITHUB_OUTPUT`` form (``stacks=[...]``, ``first=[...]``, ``middle=[...]``,
  ``last=[...]``, ``previewable=[...]``). Standard library only, so it runs before anything
  is installed.
- ``python components/offline/stacks.py comment STACK --status N ...``: the pull-request
  comment for one stack's offline render: its summary, or the render's error lines. Standard
  library only: it must work when installing the dependencies failed.
- ``python -m eks_gpu_platform.offline.stacks settings STACK``: what ``pulumi preview`` /
  ``pulumi up`` need for the stack: ``region`` (``aws:region`` from the stack file),
  ``stack-name`` (``org/project/stack`` on Pulumi Cloud, plain ``stack`` on a self-managed
  backend) and ``backend``; and what the deploy job validates after ``pulumi up``, from the
  stack setting ``eks-gpu-platform:validation``: ``validate-phases`` (comma-separated, empty:
  no validation) and ``validate-args`` (``--pool``, ``--cost-cap-usd``, ``--time-cap-minutes``
  where set). Needs the installed package (it reads the stack file the way the offline render
  does).
- ``python -m eks_gpu_platform.offline.stacks deployed-base STACK --tags F --state F``: the
  commit the stack last deployed, for the deploy job's plan gate, as ``base=<sha>``: its stack
  tag ``eks-gpu-platform:deployedCommit`` (``--tags``: ``pulumi stack tag ls --json``), which
  the job sets after a successful ``pulumi up``. Without the tag, a stack with no resources
  (``--state``: ``pulumi stack export``) has deployed nothing: ``base=`` (the gate compares with
  an empty state); one with resources is refused (exit 2), with the command that records the
  commit it runs.

Exit codes: 0 done; 2 a problem with the stack files or the arguments (one line on stderr).
"""

import argparse
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path

FIRST = "dev"
LAST = "prod"

# Pulumi's own rule for stack names (pulumi/pulumi, pkg/backend/diy/backend.go and
# pkg/backend/httpstate/backend.go, `stackNameAndProjectRegexp` / `validateStackName`).
STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")

# A backend URL of one of these schemes is Pulumi Cloud (pulumi.com or self-hosted), which has
# organizations ("For https:// URLs, the CLI will speak REST to a Pulumi Cloud",
# https://www.pulumi.com/docs/iac/cli/commands/pulumi_login/). Every other scheme (s3://,
# gs://, azblob://, file://) is a DIY backend, without organizations (`pulumi org set-default`:
# "only the managed and self-hosted backends support organizations"), whose stacks are named
# plainly: https://www.pulumi.com/docs/iac/operations/stack-management/using-a-diy-backend/
CLOUD_SCHEMES = ("https://", "http://")

# The error lines quoted in a pull-request comment are capped (the last ones are kept: a
# traceback ends with its cause); the job log has them all.
MAX_ERROR_LINES = 200
MAX_ERROR_CHARS = 20_000


# The stack tag the deploy job writes after a successful `pulumi up` (main.yml): the commit the
# stack runs. Tag names: letters, digits, `-_.:`, at most 40 (pulumi/pulumi
# pkg/util/validation/stack.go `validateStackTagName`).
DEPLOYED_TAG = "eks-gpu-platform:deployedCommit"
COMMIT = re.compile(r"^[0-9a-f]{40}$")


class StackFileError(Exception):
    """A stack file's name or content the workflows cannot use; the message is one line."""


def stack_file(project_dir: Path, stack: str) -> Path:
    return project_dir / f"Pulumi.{stack}.yaml"


def discover(project_dir: Path) -> list[str]:
    """The project's stacks, sorted: one per ``Pulumi.<stack>.yaml`` next to ``Pulumi.yaml``.

    ``Pulumi.yaml`` itself does not match the pattern. A file whose ``<stack>`` is not a valid
    Pulumi stack name raises ``StackFileError`` naming it.
    """
    stacks = []
    for path in sorted(project_dir.glob("Pulumi.*.yaml")):
        name = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        if not STACK_NAME.match(name):
            raise StackFileError(
                f"{path.name}: {name!r} is not a Pulumi stack name (letters, digits, '-', '_' "
                "and '.', at most 100)"
            )
        stacks.append(name)
    return stacks


def deploy_waves(stacks: Iterable[str]) -> dict[str, list[str]]:
    """The deploy order: ``first`` (dev), ``middle`` (every other stack), ``last`` (prod)."""
    names = sorted(set(stacks))
    return {
        "first": [s for s in names if s == FIRST],
        "middle": [s for s in names if s not in (FIRST, LAST)],
        "last": [s for s in names if s == LAST],
    }


def previewable(stacks: Iterable[str]) -> list[str]:
    """The stacks a pull request may preview with credentials: every stack but the protected
    one (``prod``, the last wave), whose preview runs only in its environment-gated deploy
    job, with the deploy role, before ``pulumi up`` (issue 29, point 6). Pull requests still
    render, plan and check every stack offline."""
    return [s for s in sorted(set(stacks)) if s != LAST]


def matrix_outputs(project_dir: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` values: every stack, the three deploy waves and the stacks a pull
    request may preview, as JSON lists."""
    stacks = discover(project_dir)
    if not stacks:
        raise StackFileError(f"no Pulumi.<stack>.yaml in {project_dir}")
    waves = deploy_waves(stacks)
    return (
        {"stacks": json.dumps(stacks)}
        | {k: json.dumps(v) for k, v in waves.items()}
        | {"previewable": json.dumps(previewable(stacks))}
    )


def deploy_settings(
    project_dir: Path, stack: str, *, backend_url: str = "", org: str = ""
) -> dict[str, str]:
    """Region, Pulumi stack name and backend kind for ``pulumi preview`` / ``pulumi up``.

    The region is the stack file's ``aws:region``, read as the offline render reads it
    (project-level defaults included). Pulumi Cloud (no backend URL, or an https one) names the
    stack ``<org>/<project>/<stack>`` when ``org`` is given, else plain ``<stack>`` (the
    token's default organization); a self-managed backend always plain ``<stack>``.
    """
    # Imported here: the other commands run on the runner's bare Python (no PyYAML).
    from .stackfile import ConfigFileError, load_stack_file

    if stack not in discover(project_dir):
        raise StackFileError(f"{stack_file(project_dir, stack).name} does not exist")
    try:
        loaded = load_stack_file(project_dir, stack, None)
    except ConfigFileError as err:
        raise StackFileError(str(err)) from None
    if not loaded.region:
        raise StackFileError(
            f"{stack_file(project_dir, stack).name}: aws:region is not set (the workflows take "
            "the AWS region from it)"
        )
    cloud = not backend_url or backend_url.startswith(CLOUD_SCHEMES)
    qualified = f"{org}/{loaded.project}/{stack}" if cloud and org else stack
    phases, args = validation_settings(stack_file(project_dir, stack).name, loaded.config)
    return {
        "region": loaded.region,
        "stack-name": qualified,
        "backend": "pulumi-cloud" if cloud else "self-managed",
        "validate-phases": phases,
        "validate-args": args,
    }


def validation_settings(file_name: str, config: dict) -> tuple[str, str]:
    """``--phases`` and the other options of the validation after ``pulumi up``, from the
    stack setting ``eks-gpu-platform:validation`` (``validate.spec``); ("", "") when unset."""
    from ..naming import PROJECT
    from ..spec import SpecError, load_value
    from ..validate.spec import ValidationSpec, validate_args

    try:
        spec = load_value(ValidationSpec, config.get(f"{PROJECT}:validation"), "validation")
    except SpecError as err:
        raise StackFileError(f"{file_name}: {'; '.join(err.lines)}") from None
    return validate_args(spec)


def _fence(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _error_block(stderr: str) -> list[str]:
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    dropped = max(0, len(lines) - MAX_ERROR_LINES)
    text = "\n".join(lines[dropped:])
    if len(text) > MAX_ERROR_CHARS:
        text = text[-MAX_ERROR_CHARS:].split("\n", 1)[-1]
        dropped = len(lines) - len(text.splitlines())
    if not text:
        return ["(no error output; see the job log)"]
    fence = _fence(text)
    head = [f"(first {dropped} line(s) left out; see the job log)", ""] if dropped else []
    return [*head, f"{fence}text", text, fence]


def render_comment(stack: str, status: str, stderr: str, summary: str | None) -> str:
    """The pull-request comment for one stack's offline render.

    ``status`` is the render's exit code as text ("" when it did not run), ``stderr`` what it
    printed there, ``summary`` its ``summary.md`` (None when it wrote none). Exit codes are the
    render's: 0 rendered, 2 invalid configuration (one line per problem), 1 anything else
    (mandatory policy violations among them).
    """
    if status == "0" and summary is not None:
        return summary
    if status == "":
        reason = "did not run (an earlier step failed; see the job log)"
    elif status == "2":
        reason = "failed: invalid stack configuration (exit 2)"
    elif status == "0":
        reason = "wrote no summary (exit 0)"
    else:
        reason = f"failed (exit {status})"
    lines = [f"### `{stack}`: the offline render {reason}", ""]
    if status != "":
        lines += [*_error_block(stderr), ""]
    text = "\n".join(lines)
    if summary is not None:
        text += "\n" + summary
    return text if text.endswith("\n") else text + "\n"


def deployed_base(stack: str, tags: dict, state: dict) -> str:
    """The commit ``stack`` last deployed (its ``DEPLOYED_TAG``), or ``""`` when it has deployed
    nothing (no tag, no resource in its state); raises ``StackFileError`` for a stack with
    resources and no tag, or a tag that is not a commit."""
    commit = tags.get(DEPLOYED_TAG)
    if commit is not None:
        if not isinstance(commit, str) or not COMMIT.match(commit):
            raise StackFileError(
                f"stack {stack}: its tag {DEPLOYED_TAG} is {commit!r}, not a full commit hash"
            )
        return commit
    resources = (state.get("deployment") or {}).get("resources") or []
    if not resources:
        return ""
    raise StackFileError(
        f"stack {stack} has {len(resources)} resources but no {DEPLOYED_TAG} tag, so the commit "
        "it runs is unknown and this change's waits cannot be planned; record the commit it was "
        f"last deployed from: pulumi stack tag set {DEPLOYED_TAG} <commit> --stack <stack>"
    )


def _read(path: Path | None) -> str | None:
    return path.read_text() if path is not None and path.is_file() else None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m eks_gpu_platform.offline.stacks",
        description="The project's stacks, for make and the GitHub workflows.",
    )
    parser.add_argument(
        "--project-dir", type=Path, default=Path.cwd(), help="folder of Pulumi.yaml"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="one stack per line")
    commands.add_parser("matrix", help="stacks and deploy waves as $GITHUB_OUTPUT lines")
    settings = commands.add_parser("settings", help="region, stack-name, backend of a stack")
    settings.add_argument("stack")
    settings.add_argument("--backend-url", default="", help="PULUMI_BACKEND_URL (empty: Cloud)")
    settings.add_argument("--org", default="", help="Pulumi Cloud organization (optional)")
    base = commands.add_parser("deployed-base", help="the commit a stack last deployed")
    base.add_argument("stack")
    base.add_argument("--tags", type=Path, required=True, help="pulumi stack tag ls --json")
    base.add_argument("--state", type=Path, required=True, help="pulumi stack export")
    comment = commands.add_parser("comment", help="the pull-request comment of one render")
    comment.add_argument("stack")
    comment.add_argument("--status", default="", help="the render's exit code ('': not run)")
    comment.add_argument("--stderr", type=Path, help="file holding the render's stderr")
    comment.add_argument("--summary", type=Path, help="the render's summary.md")
    comment.add_argument("--out", type=Path, required=True, help="where to write the comment")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    project_dir = args.project_dir
    try:
        if args.command == "list":
            print("\n".join(discover(project_dir)))
        elif args.command == "matrix":
            for key, value in matrix_outputs(project_dir).items():
                print(f"{key}={value}")
        elif args.command == "settings":
            found = deploy_settings(
                project_dir, args.stack, backend_url=args.backend_url, org=args.org
            )
            for key, value in found.items():
                print(f"{key}={value}")
        elif args.command == "deployed-base":
            try:
                tags, state = (json.loads(p.read_text() or "{}") for p in (args.tags, args.state))
            except (OSError, ValueError) as err:
                problem = f"stack {args.stack}: unreadable tags or state: {err}"
                raise StackFileError(problem) from err
            print(f"base={deployed_base(args.stack, tags, state)}")
        else:
            text = render_comment(
                args.stack, args.status, _read(args.stderr) or "", _read(args.summary)
            )
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text)
    except StackFileError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
