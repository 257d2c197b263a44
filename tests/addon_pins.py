"""Add-on versions for tests that run `pulumi up` (mocks, preview=False) on a minor whose add-ons
are not all pinned in ``versions.EKS_ADDON_VERSIONS``: `up` refuses an add-on without a version
(issue 21, point 5), as a real stack must set ``cluster.addonVersions`` there. Test data only:
well-formed versions the mocks do not check against EKS."""

ADDON_VERSIONS = {
    "vpc-cni": "v1.20.1-eksbuild.3",
    "eks-pod-identity-agent": "v1.3.0-eksbuild.1",
    "coredns": "v1.13.2-eksbuild.4",
}
