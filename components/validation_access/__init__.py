"""The validation run's own identity (issue 29, point 8): ``validation.principal`` gets an EKS
access entry (type ``STANDARD``, Kubernetes group ``validate.rbac.GROUP``, no access policy)
and the group is bound to the validation's least-privilege ClusterRole (``validate.rbac``).

- ``checks``: the key's problems against the other access entries (pure; used by ``config``);
- ``kinds``: the kinds the stack renders, from the config (pure);
- ``component.ValidationAccess``: the ClusterRole, its binding and the entry.

This ``__init__`` imports nothing, so ``config`` may import ``checks`` without a cycle.
"""
