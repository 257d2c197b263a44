"""CrossGuard entry point: ``pulumi preview --policy-pack policies``.

Only wiring. ``PolicyPack(...)`` starts the analyzer's gRPC server and blocks forever, so never
import this module; tests import ``policies.pack`` and ``policies.rules``.
"""

import sys
from pathlib import Path

# The engine runs this file with the pack directory on sys.path; the rules import `policies.*`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack

from policies.pack import build_policies

PolicyPack(
    "eks-gpu-platform",
    policies=build_policies(),
    enforcement_level=EnforcementLevel.ADVISORY,
)
