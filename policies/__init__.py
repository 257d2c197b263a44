"""The eks-gpu-platform CrossGuard policy pack.

- ``policies.rules``: one pure rule per module and the ``RULES`` registry. No Pulumi import:
  the checks take plain ``Mapping``/``Sequence`` props and return messages.
- ``policies.pack``: turns ``RULES`` into ``pulumi_policy`` policies (imports pulumi-policy).
- ``policies.offline``: runs ``RULES`` over an offline render's recorded resources.
- ``policies/__main__.py``: the CrossGuard entry point. Never import it: ``PolicyPack(...)``
  starts a gRPC server and blocks forever.
"""
