"""A stack's configuration as the Pulumi CLI hands it to the program: ``Pulumi.<stack>.yaml``
plus the project's config defaults, secrets masked.

Reading a stack file needs no Pulumi SDK: the workflows' settings step
(``python -m eks_gpu_platform.offline.stacks settings``) reads the region from it without
importing the components. ``offline.run`` re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..naming import PROJECT
from . import yaml_strict

SECRET_PLACEHOLDER = "[secret]"


class ConfigFileError(Exception):
    """The stack file itself cannot be used (missing, not YAML, wrong project)."""


@dataclass
class StackFile:
    """A stack's configuration as the Pulumi CLI would hand it to the program."""

    name: str
    project: str
    config: dict[str, Any]
    secret_keys: list[str]

    @property
    def region(self) -> str | None:
        value = self.config.get("aws:region")
        return value if isinstance(value, str) else None


def find_project(start: Path) -> Path:
    """The directory holding ``Pulumi.yaml``: ``start`` or one of its parents."""
    for folder in [start, *start.parents]:
        if (folder / "Pulumi.yaml").is_file():
            return folder
    raise ConfigFileError(f"no Pulumi.yaml in {start} or its parents")


def _load_yaml(path: Path) -> Any:
    """The YAML document in ``path`` ({} when empty); a ``ConfigFileError`` naming the file when
    it repeats a key or is not YAML."""
    try:
        return yaml_strict.load(path.read_text()) or {}
    except yaml_strict.DuplicateKeyError as err:
        lines = "\n".join(f"  {line}" for line in err.lines)
        raise ConfigFileError(f"{path} repeats keys:\n{lines}") from None
    except yaml.YAMLError as err:
        raise ConfigFileError(f"{path} is not valid YAML: {err}") from None


def load_stack_file(project_dir: Path, stack: str, config_file: Path | None) -> StackFile:
    """Read ``Pulumi.<stack>.yaml`` (or ``config_file``) plus project-level config defaults.

    This project's program reads all of its configuration from the stack file, so the file must
    exist. Another project's stack may have none, as with the Pulumi CLI (a stack without
    configuration has no ``Pulumi.<stack>.yaml``): its program sets everything in code.
    """
    path = config_file or project_dir / f"Pulumi.{stack}.yaml"
    project_file = project_dir / "Pulumi.yaml"
    project = _load_yaml(project_file)
    if not isinstance(project, dict):
        raise ConfigFileError(f"{project_file}: expected a mapping")
    name = project.get("name")
    if not path.is_file() and (config_file is not None or name == PROJECT):
        raise ConfigFileError(f"stack file {path} does not exist")
    document = _load_yaml(path) if path.is_file() else {}
    if not isinstance(document, dict) or not isinstance(document.get("config", {}), dict):
        raise ConfigFileError(f"{path}: expected a mapping with a 'config' mapping")
    config: dict[str, Any] = {}
    for key, decl in (project.get("config") or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        if isinstance(decl, dict) and "default" in decl:
            config[full] = decl["default"]
        elif isinstance(decl, dict) and "value" in decl:
            config[full] = decl["value"]
    secret_keys = []
    for key, value in (document.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            # Offline there is no secrets provider: the value is masked, never decrypted.
            value = SECRET_PLACEHOLDER
            secret_keys.append(key)
        config[key] = value
    if not name:
        raise ConfigFileError(f"{project_file} has no project name")
    return StackFile(name=stack, project=name, config=config, secret_keys=secret_keys)
