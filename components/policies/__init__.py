"""The eks-gpu-platform policy pack: rules for stacks built with this library.

- ``eks_gpu_platform.policies.rules``: one pure rule per module and the ``RULES`` registry. No
  Pulumi import: the checks take plain ``Mapping``/``Sequence`` props and return messages.
- ``eks_gpu_platform.policies.offline``: runs ``RULES`` over an offline render's recorded
  resources (the offline render calls it for every project); needs no pulumi-policy.
- ``eks_gpu_platform.policies.pack``: turns ``RULES`` into ``pulumi_policy`` policies (the only
  module that imports pulumi-policy: the ``policy`` extra, pinned in ``requirements.txt``).
- The repository's ``policies/`` folder is the CrossGuard pack directory that
  ``pulumi preview --policy-pack policies`` loads: ``PulumiPolicy.yaml`` and a ``__main__.py``
  that hands ``pack.build_policies()`` to ``PolicyPack``. Never import that ``__main__.py``:
  ``PolicyPack(...)`` starts a gRPC server and blocks forever.
"""
