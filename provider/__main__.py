"""Component provider host: serves GpuPlatform to programs in any Pulumi language.

The schema is the one the component analyzer of pulumi 3.272.0 infers from ``GpuPlatform``
(descriptions and enums: ``eks_gpu_platform.schema``; outputs: ``eks_gpu_platform.platform``),
with three corrections the stock ``ComponentProvider``
(pulumi/provider/experimental/component.py) does not make:

- outputs listed in a component's ``secret_outputs`` are marked ``secret: true`` (a field of
  Pulumi's metaschema, pkg/codegen/schema/pulumi.json ``propertySpec.secret``, that the SDK's
  schema generator, experimental/schema.py 66-91, never writes), and ``null`` values the
  generator leaves inside lists (enum values without a description) are dropped;
- a list of enum values arrives as given: ``map_input_properties`` (component.py 222-246) maps
  every item of a list whose items are a ``$ref`` as an object, which turns an enum value into
  ``{}``;
- whole numbers arrive as ``int``: numbers cross the wire as doubles, and the integer
  conversion of component.py 276-287 is overwritten by the line after it.

Other bad values reach ``GpuPlatform``, whose ``SpecError`` names the key and what is allowed
(a single enum value outside its enum is refused before that, by the stock mapping).
"""

import json
import sys
from typing import Any

from pulumi.errors import InputPropertyError
from pulumi.output import Inputs
from pulumi.provider import main
from pulumi.provider.experimental.analyzer import PropertyDefinition, PropertyType
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.util import camel_case

from eks_gpu_platform import __version__
from eks_gpu_platform.platform import GpuPlatform

NAME = "eks-gpu-platform"


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _whole_numbers(value: Any, prop: PropertyDefinition) -> Any:
    """``value`` with every integer-typed number in it (list items, map values) an ``int``."""
    if prop.type == PropertyType.INTEGER and isinstance(value, float) and value.is_integer():
        return int(value)
    if prop.items is not None and isinstance(value, list):
        return [_whole_numbers(v, prop.items) for v in value]
    if prop.additional_properties is not None and isinstance(value, dict):
        return {k: _whole_numbers(v, prop.additional_properties) for k, v in value.items()}
    return value


class GpuPlatformProvider(ComponentProvider):
    """``ComponentProvider`` with secret outputs in the schema, enum lists and integers fixed."""

    def __init__(
        self,
        components: list[type],
        name: str,
        namespace: str | None = None,
        version: str = "0.0.0",
    ) -> None:
        super().__init__(components, name, namespace, version)
        schema = _drop_nulls(json.loads(self.schema or "{}"))
        for token, resource in schema.get("resources", {}).items():
            component = self._components[token.rsplit(":", 1)[-1]]
            for output in getattr(component, "secret_outputs", ()):
                resource["properties"][camel_case(output)]["secret"] = True
        self.schema = json.dumps(schema)

    def map_input_properties(
        self,
        inputs: Inputs,
        properties: dict[str, PropertyDefinition],
        mapping: dict[str, str],
        component_name: str,
        property_path: str,
    ) -> Inputs:
        enum_lists = {
            key
            for key, prop in properties.items()
            if prop.items is not None
            and prop.items.ref
            and (items := self.get_type_definition(prop.items)) is not None
            and items.enum
        }
        rest = {k: p for k, p in properties.items() if k not in enum_lists}
        mapped = dict(
            super().map_input_properties(inputs, rest, mapping, component_name, property_path)
        )
        for key in sorted(enum_lists):
            value = inputs.get(key) if isinstance(inputs, dict) else None
            if value is not None:
                mapped[mapping[key]] = value
            elif not properties[key].optional:
                path = f"{property_path}.{key}" if property_path else key
                raise InputPropertyError(
                    path, f"Missing required input '{path}' on '{component_name}'"
                )
        for key, prop in properties.items():
            if mapping[key] in mapped:
                mapped[mapping[key]] = _whole_numbers(mapped[mapping[key]], prop)
        return mapped


def provider(version: str = __version__) -> GpuPlatformProvider:
    return GpuPlatformProvider([GpuPlatform], NAME, version=version)


if __name__ == "__main__":
    # What component_provider_host does (experimental/host.py 28-61), with this provider class.
    main(provider(), sys.argv[1:])
