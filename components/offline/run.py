"""Running a stack offline: load its stack file (``Pulumi.<stack>.yaml`` plus project-level
defaults; secrets masked), validate this project's configuration, run the program under the
recording mocks (``render``), and find the ``SpecError`` behind a failed run.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import PROJECT, PlatformConfig, partition_for_region
from ..config_load import reusing, stack_config_values
from ..spec import SpecError
from .stackfile import (
    SECRET_PLACEHOLDER,
    ConfigFileError,
    StackFile,
    find_project,
    load_stack_file,
)

if TYPE_CHECKING:
    from . import mocks

__all__ = [
    "SECRET_PLACEHOLDER",
    "ConfigFileError",
    "StackFile",
    "find_project",
    "load_stack_file",
    "print_spec_error",
    "render",
    "reusing_validated",
    "spec_error",
    "spec_errors_made",
    "validate",
]


def validate(stack: StackFile) -> PlatformConfig | None:
    """The stack's configuration as this project's program parses it; raises ``SpecError``.

    Other projects (programs that import the library) have their own configuration, and may
    give the region in code: their program validates it all as it runs (a missing region is
    then a ``SpecError`` naming ``aws:region``, from the mocks or from ``PlatformConfig``).
    """
    if stack.project != PROJECT:
        return None
    # The raw value: ``aws:region: 5`` is a wrong region, not a missing one.
    return PlatformConfig.load(
        stack_config_values(stack.config), stack.config.get("aws:region"), stack.config
    )


def reusing_validated(stack: StackFile, config: PlatformConfig | None) -> Any:
    """A context in which the program's ``PlatformConfig.load`` of the same stack configuration
    (``platform.read_stack_config``) returns ``config``, what ``validate(stack)`` gave, instead
    of loading it a second time."""
    if config is None:
        return contextlib.nullcontext()
    return reusing(
        config, stack_config_values(stack.config), stack.config.get("aws:region"), stack.config
    )


@contextlib.contextmanager
def spec_errors_made() -> Iterator[list[SpecError]]:
    """Every ``SpecError`` created while the block runs (the program's run).

    The SDK does not always keep the chain back to one: a ``SpecError`` raised in an ``apply``
    whose output is a resource input is wrapped in a ``ValueError`` naming the resource and the
    input ("While processing input ...", pulumi/runtime/rpc.py ``serialize_properties`` and
    pulumi/runtime/resource.py ``do_register``, both ``from`` it), and ``wait_for_rpcs`` then
    re-raises that error ``from`` itself (pulumi/runtime/stack.py), dropping the link. Its text
    still ends with the ``SpecError``'s: ``spec_error`` matches the two.
    """
    made: list[SpecError] = []
    original = SpecError.__init__

    def recording_init(self: SpecError, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    SpecError.__init__ = recording_init  # type: ignore[method-assign]
    try:
        yield made
    finally:
        SpecError.__init__ = original  # type: ignore[method-assign]


def spec_error(err: BaseException, made: Sequence[SpecError] = ()) -> SpecError | None:
    """The ``SpecError`` behind ``err``: itself, one it was raised from or while handling (a
    program may wrap it, e.g. in ``pulumi.RunError``), or, when the SDK broke that chain, one of
    ``made`` whose text the error's ends with."""
    seen: set[int] = set()
    node: BaseException | None = err
    while node is not None and id(node) not in seen:
        if isinstance(node, SpecError):
            return node
        seen.add(id(node))
        node = node.__cause__ or node.__context__
    text = str(err)
    return next((m for m in reversed(made) if str(m) and text.endswith(str(m))), None)


def print_spec_error(err: SpecError, header: str) -> None:
    print(header, file=sys.stderr)
    for line in err.lines:
        print(f"  {line}", file=sys.stderr)


def render(project_dir: Path, stack: StackFile, *, validated: bool = False) -> mocks.Recording:
    """Run the project's ``__main__.py`` for ``stack`` under the recording mocks.

    The mocks are not strict: a type or invoke they do not model gets generic outputs and is
    listed in ``Recording.unmodelled`` (the test suite checks the shipped stacks have none).
    ``validated``: the caller has run ``validate(stack)`` already (the command line does), so
    the configuration is not parsed a second time before the program parses it.
    """
    # Here, not at the top: loading and validating a stack file needs no Pulumi SDK (the command
    # line exits 2 on a bad configuration before this module's caller imports one).
    from . import mocks

    if not validated:
        validate(stack)
    program = project_dir / "__main__.py"
    cwd = os.getcwd()
    os.chdir(project_dir)
    try:
        return mocks.run(
            lambda: runpy.run_path(str(program), run_name="__main__"),
            project=stack.project,
            stack=stack.name,
            config=stack.config,
            region=stack.region,
            # What `pulumi preview` shows: is_dry_run() is true (a refusal kept for `up`).
            preview=True,
            partition=partition_for_region(stack.region) if stack.region else None,
            secret_keys=stack.secret_keys,
            strict=False,
        )
    finally:
        os.chdir(cwd)
