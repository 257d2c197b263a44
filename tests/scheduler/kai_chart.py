"""The kai-scheduler chart v0.17.0's defaults for the keys the project sets, as this project's
own cited table (the repository keeps no copy of the chart's values.yaml at v0.17.0).

Read at tag v0.17.0 (commit f218c69bee5e5fc6031273ba555d09916b1ca89a) of
kai-scheduler/KAI-Scheduler ``deployments/kai-scheduler/values.yaml``; each leaf names its line.
The same keys at v0.16.8 (commit 40da4c87106f28cc6ca3a1c08d89473474cbe3f3) had the same
defaults (the values.yaml diff between the tags touches none of them), and
``global.resourceReservation.createNamespace`` (L51) is new in v0.17.0 (true: the namespace is
still created).
"""

KAI_CHART_VERSION = "v0.17.0"

CHART_DEFAULTS = {
    "global": {  # L9
        "gpuSharing": False,  # L20
        "blockNvidiaVisibleDevices": False,  # L21
        "clusterAutoscaling": False,  # L22
        "nodeSelector": {},  # L23
        "tolerations": [],  # L26
        "nodePoolLabelKey": "",  # L30
        "resourceReservation": {  # L46
            "namespaceLabels": {},  # L50
            "createNamespace": True,  # L51
        },
    },
    "nodescaleadjuster": {"labels": {}},  # L238, L249
    "defaultPriorityClasses": {"enabled": True},  # L305-306
    "defaultQueue": {"createDefaultQueue": True},  # L316-317
}
