"""``NodePoolSpec`` validation: a table of bad pool specs loaded as configuration, each with its
exact message; all problems of a pool in one error; messages naming Python fields.
"""

import pytest

from eks_gpu_platform import catalog
from eks_gpu_platform.nodepool.spec import NodePoolSpec
from eks_gpu_platform.spec import SpecError

from .pools import spec

# --- validation: bad pool specs, exact messages ------------------------------------------------

G = {"name": "p", "gpus": ["l4"]}
E = {"name": "t", "kind": "efa", "instanceTypes": ["p5.48xlarge"], "zone": "us-east-1a"}
C = {"name": "c", "kind": "cpu"}
EFA_CAPABLE = ", ".join(catalog.efa_instance_types())

BAD_SPECS = [
    (
        "unknown-gpu",
        {**G, "gpus": ["h1000"]},
        "nodePools[0].gpus[0]: 'h1000' is not a known NVIDIA GPU; expected one of a100, a10g, "
        "b200, b300, h100, h200, l4, l40s, rtx-pro-server-6000, t4, t4g; did you mean 'h100'?",
    ),
    (
        # Karpenter's instance-gpu-name values are lower case; the spelling NVIDIA uses is not.
        "capitalised-gpu",
        {**G, "gpus": ["L4"]},
        "nodePools[0].gpus[0]: 'L4' is not a known NVIDIA GPU; expected one of a100, a10g, "
        "b200, b300, h100, h200, l4, l40s, rtx-pro-server-6000, t4, t4g; did you mean 'l4'?",
    ),
    (
        "capitalised-family",
        {"name": "p", "instanceFamilies": ["G6"]},
        "nodePools[0].instanceFamilies[0]: 'G6' is not a GPU family; expected one of g4dn, g5, "
        "g5g, g6, g6e, g6f, g7e, gr6, p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300; did you mean "
        "'g6'?",
    ),
    (
        "capitalised-instance-type",
        {"name": "p", "instanceTypes": ["P5.48xlarge"]},
        "nodePools[0].instanceTypes[0]: 'P5.48xlarge' is not a known NVIDIA GPU instance type; "
        "did you mean 'p5.48xlarge'?",
    ),
    (
        "non-gpu-family",
        {"name": "p", "instanceFamilies": ["m5"]},
        "nodePools[0].instanceFamilies[0]: 'm5' is not a GPU family; expected one of g4dn, g5, "
        "g5g, g6, g6e, g6f, g7e, gr6, p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300",
    ),
    (
        "gpu-family-in-cpu-pool",
        {**C, "instanceFamilies": ["m7i", "g6"]},
        "nodePools[0].instanceFamilies[1]: 'g6' is a GPU family; GPU capacity belongs in a gpu "
        "pool",
    ),
    (
        "gpus-in-cpu-pool",
        {**C, "gpus": ["l4"]},
        "nodePools[0].gpus: a cpu pool selects no GPUs; use kind: gpu",
    ),
    (
        "unknown-instance-type",
        {"name": "p", "instanceTypes": ["p5.96xlarge"]},
        "nodePools[0].instanceTypes[0]: 'p5.96xlarge' is not a known NVIDIA GPU instance type; "
        "did you mean 'p5.4xlarge'?",
    ),
    (
        "efa-on-type-without-efa",
        {**E, "instanceTypes": ["g6.xlarge"]},
        f"nodePools[0].instanceTypes[0]: 'g6.xlarge' has no EFA; EFA-capable types: {EFA_CAPABLE}",
    ),
    (
        "efa-without-zone",
        {"name": "t", "kind": "efa", "instanceTypes": ["p5.48xlarge"]},
        "nodePools[0].zone: is required for an efa pool: EFA nodes share one AZ and one cluster "
        "placement group",
    ),
    (
        "zone-on-gpu-pool",
        {**G, "zone": "us-east-1a"},
        "nodePools[0].zone: only applies to efa pools; this pool is 'gpu'",
    ),
    (
        "bad-zone",
        {**E, "zone": "us-east-1"},
        "nodePools[0].zone: 'us-east-1' is not an availability zone like 'us-west-2a'",
    ),
    (
        "reserved-without-reservations",
        {**G, "capacityTypes": ["reserved", "on-demand"]},
        "nodePools[0].capacityTypes: includes 'reserved' but capacityReservations is empty; "
        "select the reservations or Capacity Blocks by id or tags",
    ),
    (
        "reservations-without-reserved",
        {**G, "capacityReservations": [{"id": "cr-0123"}]},
        "nodePools[0].capacityReservations: is set but capacityTypes lacks 'reserved'; add it "
        "(first) to use them",
    ),
    (
        "empty-capacity-types",
        {**G, "capacityTypes": []},
        "nodePools[0].capacityTypes: is empty; list at least one of reserved, spot, on-demand",
    ),
    (
        "duplicate-capacity-type",
        {**G, "capacityTypes": ["on-demand", "on-demand"]},
        "nodePools[0].capacityTypes: ['on-demand', 'on-demand'] lists a capacity type twice",
    ),
    (
        "on-demand-before-spot",
        {**G, "capacityTypes": ["on-demand", "spot"], "preemptible": True},
        "nodePools[0].capacityTypes: ['on-demand', 'spot'] cannot be honoured: within a NodePool "
        "Karpenter tries reserved, then spot, then on-demand; write ['spot', 'on-demand'], or use "
        "a second pool with a lower weight for the fallback",
    ),
    (
        "spot-on-non-preemptible",
        {**G, "capacityTypes": ["spot"]},
        "nodePools[0].capacityTypes: includes 'spot' but the pool is not preemptible; spot "
        "reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
    ),
    (
        "unknown-capacity-type",
        {**G, "capacityTypes": ["ondemand"]},
        "nodePools[0].capacityTypes[0]: 'ondemand' is not allowed; expected one of reserved, "
        "spot, on-demand; did you mean 'on-demand'?",
    ),
    (
        "non-preemptible-underutilized",
        {**G, "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized"}},
        "nodePools[0].disruption.consolidationPolicy: 'WhenEmptyOrUnderutilized' moves running "
        "pods; a non-preemptible pool consolidates only WhenEmpty",
    ),
    (
        "non-preemptible-balanced",
        {**G, "disruption": {"consolidationPolicy": "Balanced"}},
        "nodePools[0].disruption.consolidationPolicy: 'Balanced' moves running pods; a "
        "non-preemptible pool consolidates only WhenEmpty",
    ),
    (
        "nothing-selected",
        {"name": "p"},
        "nodePools[0].gpus: a gpu pool must select GPUs: set gpus, instanceFamilies or "
        "instanceTypes",
    ),
    (
        "selection-matches-nothing",
        {"name": "p", "gpus": ["h100"], "instanceFamilies": ["g6"]},
        "nodePools[0].gpus: no instance type matches gpus ['h100'], instanceFamilies ['g6'] and "
        "instanceTypes [] together",
    ),
    (
        "types-match-nothing",
        {"name": "p", "gpus": ["h100"], "instanceTypes": ["g6.xlarge"]},
        "nodePools[0].instanceTypes: no instance type matches gpus ['h100'], instanceFamilies [] "
        "and instanceTypes ['g6.xlarge'] together",
    ),
    (
        "efa-selection-matches-nothing",
        {"name": "t", "kind": "efa", "zone": "us-east-1a", "gpus": ["t4g"]},
        "nodePools[0].gpus: no EFA-capable instance type matches gpus ['t4g'], instanceFamilies "
        "[] and instanceTypes [] together",
    ),
    (
        "efa-limit-below-one-node",
        {**E, "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"], "limits": {"gpus": 4}},
        "nodePools[0].limits.gpus: 4 holds no whole node of the pool: its smallest type is "
        "p5.48xlarge, 8 GPUs; raise it or select fewer types",
    ),
    (
        "efa-type-shares-leave-no-node",
        {
            **E,
            "instanceTypes": ["p5en.48xlarge", "p5.48xlarge"],
            "limits": {"gpus": 8},
            "typeShares": {"p5en.48xlarge": 0, "p5.48xlarge": 0},
        },
        "nodePools[0].limits.gpus: 8 holds no whole node of its first NodePool "
        "'t-p5en-48xlarge' (instanceTypes order) (typeShares give it 0): its smallest type is "
        "p5en.48xlarge, 8 GPUs; raise it or select fewer types",
    ),
    (
        "type-shares-on-a-gpu-pool",
        {**G, "typeShares": {"g6.xlarge": 1}},
        "nodePools[0].typeShares: only applies to efa pools (one NodePool per EFA layout); 'p' "
        "is a gpu pool",
    ),
    (
        "type-shares-unknown-type",
        {**E, "instanceTypes": ["p5.48xlarge"], "typeShares": {"p5e.48xlarge": 8}},
        "nodePools[0].typeShares: 'p5e.48xlarge' is not an instance type of efa pool 't'; "
        "expected one of p5.48xlarge",
    ),
    (
        "type-shares-not-whole-nodes",
        {**E, "instanceTypes": ["p5.48xlarge"], "typeShares": {"p5.48xlarge": 12}},
        "nodePools[0].typeShares: the share of 'p5.48xlarge' is 12 GPUs, not whole 8-GPU nodes; "
        "use a multiple of 8",
    ),
    (
        "type-shares-above-the-cap",
        {
            **E,
            "instanceTypes": ["p5en.48xlarge", "p5.48xlarge"],
            "limits": {"gpus": 16},
            "typeShares": {"p5en.48xlarge": 16, "p5.48xlarge": 8},
        },
        "nodePools[0].typeShares: sum to 24 GPUs, more than limits.gpus of efa pool 't' (16)",
    ),
    (
        "gpu-limit-below-one-node",
        {**G, "instanceTypes": ["g6.12xlarge"], "limits": {"gpus": 2}},
        "nodePools[0].limits.gpus: 2 is less than one node of the smallest type (g6.12xlarge, "
        "4 GPUs); raise it or select fewer types",
    ),
    (
        "budget-nodes",
        {**G, "disruption": {"budgets": [{"nodes": "101%"}]}},
        "nodePools[0].disruption.budgets[0].nodes: '101%' is not a node count or percentage such "
        "as '10%'",
    ),
    (
        "budget-schedule-without-duration",
        {**G, "disruption": {"budgets": [{"nodes": "0", "schedule": "@daily"}]}},
        "nodePools[0].disruption.budgets[0].schedule: and duration must be set together",
    ),
    (
        "budget-reason",
        {**G, "disruption": {"budgets": [{"nodes": "1", "reasons": ["Expired"]}]}},
        "nodePools[0].disruption.budgets[0].reasons[0]: 'Expired' is not allowed; expected one "
        "of Underutilized, Empty, Drifted",
    ),
    (
        "budget-cron",
        {**G, "disruption": {"budgets": [{"nodes": "1", "schedule": "0 8 * *", "duration": "1h"}]}},
        "nodePools[0].disruption.budgets[0].schedule: '0 8 * *' is not a 5-field cron schedule "
        "(minute hour day-of-month month day-of-week) or an @daily macro",
    ),
    (
        "budget-duration-seconds",
        {**G, "disruption": {"budgets": [{"nodes": "1", "schedule": "@daily", "duration": "30s"}]}},
        "nodePools[0].disruption.budgets[0].duration: '30s' is not a duration in hours and "
        "minutes such as '8h' or '1h30m'",
    ),
    (
        "consolidate-after",
        {**G, "disruption": {"consolidateAfter": "5 minutes"}},
        "nodePools[0].disruption.consolidateAfter: '5 minutes' is not a duration or 'Never'",
    ),
    (
        "expire-after-days",
        {**G, "expireAfter": "30d"},
        "nodePools[0].expireAfter: '30d' is not a duration such as '4h' or '1h30m' or 'Never'",
    ),
    (
        "grace-never",
        {**G, "terminationGracePeriod": "Never"},
        "nodePools[0].terminationGracePeriod: 'Never' is not a duration such as '4h' or '1h30m'",
    ),
    (
        "weight-0",
        {**G, "weight": 0},
        "nodePools[0].weight: 0 is out of range; expected a number from 1 to 100",
    ),
    (
        "weight-101",
        {**G, "weight": 101},
        "nodePools[0].weight: 101 is out of range; expected a number from 1 to 100",
    ),
    (
        "name",
        {**G, "name": "GPU_pool"},
        "nodePools[0].name: 'GPU_pool' is not a pool name; expected 1-42 lowercase letters, "
        "digits or '-'",
    ),
    (
        "label-karpenter-domain",
        {**G, "labels": {"karpenter.sh/nodepool": "p"}},
        "nodePools[0].labels: 'karpenter.sh/nodepool' is in a domain Kubernetes or Karpenter "
        "reserves (karpenter.sh, karpenter.k8s.aws, kubernetes.io, k8s.io); use your own domain",
    ),
    (
        "label-kubernetes-subdomain",
        {**G, "labels": {"node.kubernetes.io/instance-type": "x"}},
        "nodePools[0].labels: 'node.kubernetes.io/instance-type' is in a domain Kubernetes or "
        "Karpenter reserves (karpenter.sh, karpenter.k8s.aws, kubernetes.io, k8s.io); use your "
        "own domain",
    ),
    (
        "label-value-too-long",
        {**G, "labels": {"example.org/team": "x" * 64}},
        "nodePools[0].labels: the value '" + "x" * 64 + "' of 'example.org/team' is not a label "
        "value; expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
        "letter or digit",
    ),
    (
        "gpu-taint-by-hand",
        {**G, "taints": [{"key": "nvidia.com/gpu", "value": "true"}]},
        "nodePools[0].taints[0].key: 'nvidia.com/gpu' is added automatically; remove it",
    ),
    (
        "efa-taint-by-hand",
        {**E, "taints": [{"key": "example.com/a", "value": "b"}, {"key": "vpc.amazonaws.com/efa"}]},
        "nodePools[0].taints[1].key: 'vpc.amazonaws.com/efa' is added automatically; remove it",
    ),
    (
        "ami-latest",
        {**G, "ami": {"version": "latest"}},
        "nodePools[0].ami.version: 'latest' drifts every node on each AMI release; pin a version "
        "such as 'v20260903'",
    ),
    (
        "ami-bottlerocket-latest",
        {**G, "ami": {"family": "bottlerocket", "version": "latest"}},
        "nodePools[0].ami.version: 'latest' drifts every node on each AMI release; pin a version "
        "such as 'v1.65.0'",
    ),
    (
        "ami-bottlerocket-format",
        {**G, "ami": {"family": "bottlerocket", "version": "v20260903"}},
        "nodePools[0].ami.version: 'v20260903' is not a bottlerocket release like 'v1.65.0'",
    ),
    (
        "ami-al2",
        {**G, "ami": {"family": "al2"}},
        "nodePools[0].ami.family: 'al2' is not allowed; expected one of al2023, bottlerocket; did "
        "you mean 'al2023'?",
    ),
    (
        "iops-per-gib",
        {**G, "rootVolume": {"sizeGib": 20, "iops": 12000}},
        "nodePools[0].rootVolume.iops: 12000 exceeds gp3's 500 IOPS per GiB for 20 GiB",
    ),
    (
        "iops-range",
        {**G, "rootVolume": {"iops": 20000}},
        "nodePools[0].rootVolume.iops: 20000 is out of range; expected a number from 3000 to 16000",
    ),
    (
        "throughput-range",
        {**G, "rootVolume": {"throughput": 100}},
        "nodePools[0].rootVolume.throughput: 100 is out of range; expected a number from 125 to "
        "1000",
    ),
    (
        "size-range",
        {**G, "rootVolume": {"sizeGib": 10}},
        "nodePools[0].rootVolume.sizeGib: 10 is out of range; expected a number from 20 to 16384",
    ),
    (
        "max-pods",
        {**G, "kubelet": {"maxPods": 0}},
        "nodePools[0].kubelet.maxPods: 0 is out of range; expected a number from 1 to 737",
    ),
    (
        "reserved-key",
        {**G, "kubelet": {"systemReserved": {"gpu": "1"}}},
        "nodePools[0].kubelet.systemReserved: key 'gpu' is not allowed; expected one of cpu, "
        "memory, ephemeral-storage, pid",
    ),
    (
        "reserved-quantity",
        {**G, "kubelet": {"kubeReserved": {"memory": "1 GiB"}}},
        "nodePools[0].kubelet.kubeReserved: memory: '1 GiB' is not a Kubernetes quantity",
    ),
    (
        "reservation-id-and-tags",
        {
            **G,
            "capacityTypes": ["reserved"],
            "capacityReservations": [{"id": "cr-0123", "tags": {"a": "b"}}],
        },
        "nodePools[0].capacityReservations[0].id: cannot be combined with tags or ownerId",
    ),
    (
        "reservation-bad-id",
        {**G, "capacityTypes": ["reserved"], "capacityReservations": [{"id": "cr-ABC"}]},
        "nodePools[0].capacityReservations[0].id: 'cr-ABC' is not a reservation id like 'cr-0123'",
    ),
    (
        "reservation-bad-owner",
        {
            **G,
            "capacityTypes": ["reserved"],
            "capacityReservations": [{"tags": {"a": "b"}, "ownerId": "1234"}],
        },
        "nodePools[0].capacityReservations[0].ownerId: '1234' is not a 12-digit account id",
    ),
    (
        "reservation-empty",
        {**G, "capacityTypes": ["reserved"], "capacityReservations": [{}]},
        "nodePools[0].capacityReservations[0]: needs an id or tags",
    ),
    (
        "mig-on-cpu-pool",
        {**C, "migProfile": "all-1g.10gb"},
        "nodePools[0].migProfile: only applies to gpu and efa pools; this pool is 'cpu'",
    ),
    (
        "time-slicing-on-cpu-pool",
        {**C, "timeSlicing": "shared-4"},
        "nodePools[0].timeSlicing: only applies to gpu and efa pools; this pool is 'cpu'",
    ),
    (
        "mig-and-time-slicing",
        {**G, "migProfile": "all-1g.10gb", "timeSlicing": "shared-4"},
        "nodePools[0].timeSlicing: cannot be combined with migProfile on the same pool",
    ),
    (
        "gpu-limit-on-cpu-pool",
        {**C, "limits": {"gpus": 4}},
        "nodePools[0].limits.gpus: only applies to gpu and efa pools",
    ),
    (
        "gpu-limit-0",
        {**G, "limits": {"gpus": 0}},
        "nodePools[0].limits.gpus: 0 is out of range; expected a number from 1 to 100000",
    ),
    (
        "cpu-limit",
        {**C, "limits": {"cpu": "lots"}},
        "nodePools[0].limits.cpu: 'lots' is not a Kubernetes quantity such as '1000'",
    ),
    (
        "bad-kind",
        {**G, "kind": "gpus"},
        "nodePools[0].kind: 'gpus' is not allowed; expected one of gpu, efa, cpu; did you mean "
        "'gpu'?",
    ),
    (
        "name-missing",
        {"gpus": ["l4"]},
        "nodePools[0].name: is required",
    ),
]


@pytest.mark.parametrize(
    ("raw", "message"), [case[1:] for case in BAD_SPECS], ids=[case[0] for case in BAD_SPECS]
)
def test_bad_pool_spec(raw, message):
    with pytest.raises(SpecError) as err:
        spec(raw)
    assert str(err.value) == message
    assert err.value.lines == [message]


def test_every_problem_of_a_pool_is_reported_at_once():
    with pytest.raises(SpecError) as err:
        spec(
            {
                "name": "p",
                "gpus": ["l4"],
                "capacityTypes": ["spot"],
                "weight": 0,
                "zone": "us-east-1a",
            }
        )
    assert err.value.lines == [
        "nodePools[0].capacityTypes: includes 'spot' but the pool is not preemptible; spot "
        "reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
        "nodePools[0].weight: 0 is out of range; expected a number from 1 to 100",
        "nodePools[0].zone: only applies to efa pools; this pool is 'gpu'",
    ]


def test_python_construction_names_python_fields():
    with pytest.raises(SpecError) as err:
        NodePoolSpec(name="p", gpus=("l4",), weight=0)
    assert (
        str(err.value) == "NodePoolSpec.weight: 0 is out of range; expected a number from 1 to 100"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"name": "t", "kind": "efa", "zone": "us-east-1a"},
            "nodePools[0].gpus: an efa pool must select GPUs: set gpus, instanceFamilies or "
            "instanceTypes",
        ),
        (
            {**G, "ami": {"version": "20260903"}},
            "nodePools[0].ami.version: '20260903' is not an al2023 release like 'v20260903'",
        ),
    ],
    ids=["efa-pool", "al2023-release"],
)
def test_messages_use_the_right_article(raw, message):
    with pytest.raises(SpecError) as err:
        spec(raw)
    assert str(err.value) == message
