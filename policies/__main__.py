"""CrossGuard entry point: ``pulumi preview --policy-pack policies``.

Only wiring: the rules ship in the library as ``eks_gpu_platform.policies``, installed in the
project's virtualenv that PulumiPolicy.yaml names (``requirements.txt``: ``-e .`` and
pulumi-policy). How the engine runs a Python pack that has a ``__main__.py``: the Python language
host starts ``python -u -m pulumi.policy <engine> <pack dir>`` with the pack directory as its
working directory (pulumi/pulumi@1b5949891b3c, v3.259.0+14,
sdk/python/cmd/pulumi-language-python/main.go lines 1552-1586, 1611-1617 and 1636-1642), and
``pulumi.policy`` runs this file with ``runpy.run_path(<pack dir>)`` (pulumi 3.272.0,
pulumi/policy/__main__.py line 61). So ``sys.path`` holds the pack directory, not the repository
root: ``eks_gpu_platform`` comes from the virtualenv (the editable install in this repository).

``PolicyPack(...)`` starts the analyzer's gRPC server and blocks forever: never import this
module; tests import ``eks_gpu_platform.policies``.
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from eks_gpu_platform.policies.pack import PACK_NAME, build_policies

PolicyPack(
    PACK_NAME,
    policies=build_policies(),
    enforcement_level=EnforcementLevel.ADVISORY,
)
