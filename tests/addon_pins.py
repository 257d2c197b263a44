"""Add-on versions for tests (test data only: well-formed versions the mocks do not check
against EKS).

``ADDON_VERSIONS``: a ``cluster.addonVersions`` pin for every add-on, for tests about something
else, so that their programs ask EKS nothing about add-ons (cluster/addon_versions.py: a pin is
used as given; no getCluster, getAddon or getAddonVersion for it).

``PUBLISHED``: what the mocks' ``getAddonVersion`` answers in tests that run the lookup
(``RecordingMocks.published_addon_versions``), shaped as EKS publishes its versions.
"""

ADDON_VERSIONS = {
    "vpc-cni": "v1.20.1-eksbuild.3",
    "kube-proxy": "v1.36.0-eksbuild.14",
    "eks-pod-identity-agent": "v1.3.0-eksbuild.1",
    "coredns": "v1.13.2-eksbuild.4",
}

PUBLISHED = {
    "vpc-cni": "v1.21.1-eksbuild.1",
    "kube-proxy": "v1.36.1-eksbuild.2",
    "eks-pod-identity-agent": "v1.3.10-eksbuild.1",
    "coredns": "v1.13.2-eksbuild.9",
}
