"""Facts from other projects that the tests need, in this project's own words and tables.

The repository holds only what its authors wrote: no upstream file is copied here. Each fact
carries where it comes from (repository, path, tag or commit, line), so a pin upgrade is a
re-read of those lines at the new tag:

- ``crds/``: this project's structural schemas of the custom kinds it writes and the
  Karpenter-less CRDs the conformance suite installs (KAI's Queue and PodGroup, mpi-operator's
  MPIJob), read by ``tests/crd_validation.py`` and ``tests/conformance/apiserver/env.go``;
- ``charts``: the chart defaults the Helm values tests check our keys against (GPU Operator,
  its NFD subchart, the EFA device plugin);
- ``node_bootstrap``: amazon-eks-ami's nodeadm and Bottlerocket facts the user-data tests rely on.
"""
