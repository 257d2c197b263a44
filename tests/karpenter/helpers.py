"""Values shared by the Karpenter tests: the system nodes' selector and tolerations."""

SYSTEM_SELECTOR = {"eks-gpu-platform.io/system": "true"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
