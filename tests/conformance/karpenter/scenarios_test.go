package karpenter

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

var scenarios = []Scenario{
	{
		Name: "pool-shapes",
		// README "Node pools": each pool launches the instance types its NodePool's requirements
		// admit on AWS's data and its stack entry declares (oracle_types_test.go, not capacity.json),
		// with the capacity types its NodePool allows, for the workload templates of its queues
		// (examples/).
		Claim:  "pods shaped like each pool's workload templates get NodeClaims of types the pool's NodePool and stack entry admit, and of its capacity types",
		Stacks: always,
		Run:    scenarioPoolShapes,
	},
	{
		Name: "pool-flood",
		// README "Capacity plan": Karpenter buys no more GPUs than KAI admits; the oracles are
		// the rendered Queues and AWS's data (oracle_test.go), not capacity.json.
		Claim:  "flooding a pool with unit pods stops at its NodePool limits, within what KAI admits from the rendered Queues, on instance types the NodePool and the stack admit",
		Stacks: always,
		Run:    scenarioPoolFlood,
	},
	{
		Name: "reservations",
		// Pulumi.prod.yaml "Multi-node training over EFA: a capacity reservation first, then
		// on-demand": the NodePool's capacityReservationSelectorTerms (reservations_test.go).
		Claim:  "a pool with reserved capacity buys its reservation first, then falls back to on-demand up to its limit; with on-demand out of capacity it stops at the reservation",
		Stacks: func(r *Render) bool { return len(reservedNodePools(r)) > 0 },
		Run:    scenarioReservations,
	},
	{
		Name: "reserved-only",
		// docs/node-pools.md "Capacity types": a reserved-only pool keeps its pods pending while
		// its reservation is full; it does not hand them to a lower-weight pool
		// (reservedonly_test.go).
		Claim:  "pods of a reserved-only NodePool whose reservation is full stay pending, even with a lower-weight NodePool that could take them",
		Stacks: func(r *Render) bool { return len(reservedNodePools(r)) > 0 },
		Run:    scenarioReservedOnly,
	},
	{
		Name: "gang-reservation",
		// docs/friction-points.md 4: a gang template pins a reservation's type first (issue 30,
		// point 3; gangreservation_test.go).
		Claim:  "a gang template on a pool with reserved capacity launches its pods into the reservation, on its type and in its zone",
		Stacks: func(r *Render) bool { return len(reservedNodePools(r)) > 0 },
		Run:    scenarioGangReservation,
	},
	{
		Name: "efa-taint",
		// README "EFA pools": EFA nodes carry the vpc.amazonaws.com/efa taint, so GPU work that
		// does not ask for EFA never lands on (and never buys) an EFA node.
		Claim:  "a GPU pod that tolerates only nvidia.com/gpu launches nothing in an EFA NodePool",
		Stacks: func(r *Render) bool { return len(efaPools(r)) > 0 },
		Run:    scenarioEFATaint,
	},
	{
		Name: "overlay-units",
		// README "Time-slicing and MIG": a time-sliced pool's limit is in slices, and the
		// NodeOverlay makes Karpenter charge a node its advertised slices; capacity.json
		// advertisedPerNode.
		Claim:  "time-sliced/MIG NodeClaims are charged the overlaid (advertised) units, not whole GPUs",
		Stacks: func(r *Render) bool { return len(slicedPools(r)) > 0 },
		Run:    scenarioOverlayUnits,
	},
	{
		Name: "efa-gang",
		// README "EFA pools" / Pulumi.prod.yaml "Gang-scheduled LLM training on the reservation":
		// a gang of the queue's quota is placed in one zone on one instance type with every EFA
		// interface of the type in its launch request.
		Claim:  "an EFA gang of the queue's quota is placed, one zone and type, all EFA interfaces requested",
		Stacks: func(r *Render) bool { return len(efaPools(r)) > 0 },
		Run:    scenarioEFAGang,
	},
	{
		Name: "disruption",
		// README "Disruption": idle new nodes are consolidated after consolidateAfter; a node
		// running a karpenter.sh/do-not-disrupt pod is not.
		Claim:  "an empty GPU node with its system DaemonSet pods is a consolidation candidate; one running a do-not-disrupt pod is not",
		Stacks: always,
		Run:    scenarioDisruption,
	},
	{
		Name: "user-data",
		// README "Node start": the EC2NodeClasses' user data (parallel pulls, hugepages, RAID0)
		// reaches the node before Karpenter's NodeConfig, unchanged.
		Claim:  "Karpenter's launch template user data keeps the EC2NodeClass's parts first and sets none of its pull settings",
		Stacks: always,
		Run:    scenarioUserData,
	},
	{
		Name: "ami-aliases",
		// components/versions.py: the pinned AL2023 alias resolves for every supported minor.
		Claim:  "the pinned AMI alias resolves through the SSM parameters of every supported Kubernetes minor (AMIsReady)",
		Stacks: always,
		Run:    scenarioAMIAliases,
	},
}

func always(*Render) bool { return true }

// nodePoolsOf: the NodePool names of a capacity.json pool (its limit keys), sorted.
func nodePoolsOf(r *Render, pool string) []string {
	for _, p := range r.Capacity.Pools {
		if p.Name == pool {
			return sortedKeys(p.Limit)
		}
	}
	return nil
}

// poolOf: the eks-gpu-platform.io/pool label of a NodePool.
func poolOf(h *Harness, nodePool string) string {
	return h.NodePools[nodePool].Spec.Template.Labels[poolLabel]
}

func capacityTypes(np *karpv1.NodePool) []string {
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == karpv1.CapacityTypeLabelKey && r.Operator == corev1.NodeSelectorOpIn {
			return r.Values
		}
	}
	return []string{karpv1.CapacityTypeOnDemand}
}

func gpuCount(d *InstanceData, instanceType string) int {
	info, ok := d.ByName[instanceType]
	if !ok || info.GpuInfo == nil {
		return 0
	}
	n := 0
	for _, g := range info.GpuInfo.Gpus {
		n += int(aws.ToInt32(g.Count))
	}
	return n
}

func newHarness(r *Render, d *InstanceData) (*Harness, []error) {
	h, err := NewHarness(r, d)
	if err != nil {
		return nil, []error{fmt.Errorf("render %s: harness: %w", r.Stack, err)}
	}
	if errs := h.NotReady(); len(errs) > 0 {
		return nil, errs
	}
	if err := h.createNamespaces(); err != nil {
		return nil, []error{err}
	}
	return h, nil
}

func (h *Harness) createNamespaces() error {
	for _, d := range h.Render.All() {
		if d.Object.GetKind() == "Namespace" {
			if err := createObject(h.Ctx, h.Client, d.Object.DeepCopy()); err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
		}
	}
	return nil
}

// ---- a. pool shapes ----

func scenarioPoolShapes(r *Render, d *InstanceData) []error {
	workloads, err := r.Workloads()
	if err != nil {
		return []error{err}
	}
	probe, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	pools := gpuNodePools(probe)
	var errs []error
	for _, pool := range sortedKeys(pools) {
		var mine []Workload
		for _, w := range workloads {
			if lo.Contains(w.Pools, pool) {
				mine = append(mine, w)
			}
		}
		if len(mine) == 0 {
			continue // no queue routes to the pool: no template to shape pods after
		}
		for _, w := range mine {
			h, herrs := newHarness(r, d)
			if herrs != nil {
				return append(errs, herrs...)
			}
			oracle, err := newTypeOracle(h, d)
			if err != nil {
				return append(errs, fmt.Errorf("pool-shapes: %w", err))
			}
			var admitted []string
			for _, np := range pools[pool] {
				admitted = append(admitted, oracle.admitted[np]...)
			}
			pods := w.Pods(0)
			round, err := h.Provision(pods...)
			if err != nil {
				errs = append(errs, fmt.Errorf("pool %s, %s: %w", pool, w.Doc, err))
				continue
			}
			for p, perr := range round.PodErrors {
				errs = append(errs, fmt.Errorf("pool %s, %s: pod %s got no node%s: %v", pool, w.Doc, p.Name, explainRandomDomain(perr, admitted), perr))
			}
			for _, l := range round.Launched {
				np := l.NodePool()
				if poolOf(h, np) != pool {
					errs = append(errs, fmt.Errorf("pool %s, %s: launched on NodePool %s of pool %q", pool, w.Doc, np, poolOf(h, np)))
				}
				errs = append(errs, oracle.check("pool-shapes: "+w.Doc.String(), pool, l, l.Options)...)
				if cts := capacityTypes(h.NodePools[np]); !lo.Contains(cts, l.CapacityType()) {
					errs = append(errs, fmt.Errorf("pool %s, %s: capacity type %s, NodePool %s allows %v", pool, w.Doc, l.CapacityType(), np, cts))
				}
			}
		}
	}
	return errs
}

// ---- a. flood ----

// scenarioPoolFlood floods each GPU pool (its NodePools: the rendered NodePools carrying its
// eks-gpu-platform.io/pool label and an nvidia.com/gpu limit) with one-GPU pods and judges the
// flood against oracles of its own (oracle_test.go, oracle_types_test.go), never capacity.json:
//   - Karpenter stops at each NodePool's rendered spec.limits (its own promise);
//   - the pool's GPUs stay within what KAI can ever admit there, from the rendered Queues by KAI's
//     rules (limits, ancestors, quota for non-preemptible work), rounded up to whole nodes of the
//     pool's smallest type; where the pool's budget is the whole ceiling (Exact), they reach it;
//   - every launched type, and every type each NodeClaim could launch, is one the NodePool's
//     requirements admit on AWS's data and the stack's pool declares;
//   - each NodeClaim is charged its type's units (the pool's NodeOverlay, else AWS's GPU count).
func scenarioPoolFlood(r *Render, d *InstanceData) []error {
	queues, err := renderQueues(r)
	if err != nil {
		return []error{err}
	}
	workloads, err := r.Workloads()
	if err != nil {
		return []error{err}
	}
	probe, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	pools := gpuNodePools(probe)
	gpuPools := lo.SliceToMap(lo.Keys(pools), func(p string) (string, bool) { return p, true })
	var errs []error
	for _, pool := range sortedKeys(pools) {
		h, herrs := newHarness(r, d)
		if herrs != nil {
			return append(errs, herrs...)
		}
		oracle, err := newTypeOracle(h, d)
		if err != nil {
			return append(errs, fmt.Errorf("pool-flood: %w", err))
		}
		nodePools := pools[pool]
		var taints []corev1.Taint
		units := int64(0)
		for _, np := range nodePools {
			taints = append(taints, h.NodePools[np].Spec.Template.Spec.Taints...)
			l := h.NodePools[np].Spec.Limits[gpu]
			units += l.Value()
		}
		template := PoolTemplate(pool, lo.UniqBy(taints, func(t corev1.Taint) string { return t.Key + string(t.Effect) }))
		unit := rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")
		launched, last, err := h.Flood(func(i int) *corev1.Pod {
			return UnitPod(template, "default", fmt.Sprintf("unit-%s-%d", pool, i), unit)
		}, int(units)+2, 40)
		if err != nil {
			errs = append(errs, fmt.Errorf("pool-flood: pool %s: %w", pool, err))
			continue
		}
		charged := map[string]int64{}
		total := int64(0)
		for _, l := range launched {
			q := l.NodeClaim.Status.Capacity[gpu]
			charged[l.NodePool()] += q.Value()
			total += q.Value()
			if want := nodeUnits(r, d, pool, l.InstanceType()); q.Value() != want {
				errs = append(errs, fmt.Errorf("pool-flood: pool %s: NodeClaim %s (%s) charged %d nvidia.com/gpu, its type is %d units (the pool's NodeOverlay, else AWS's GPU count)",
					pool, l.NodeClaim.Name, l.InstanceType(), q.Value(), want))
			}
			errs = append(errs, oracle.check("pool-flood", pool, l, l.Options)...)
		}
		why := ""
		if last != nil {
			why = firstPodError(last)
		}
		for _, np := range nodePools {
			limit := h.NodePools[np].Spec.Limits[gpu]
			if charged[np] != limit.Value() {
				w := why
				if charged[np] == 0 {
					w = h.offerings(np) + "; " + why
				}
				errs = append(errs, fmt.Errorf("pool-flood: pool %s: NodePool %s: the flood stopped at %d nvidia.com/gpu charged, its spec.limits say %d (last round: %s)",
					pool, np, charged[np], limit.Value(), w))
			}
		}
		preemptible, how := poolPreemptible(r, h, workloads, pool)
		c := poolCeiling(queues, pool, preemptible, gpuPools)
		smallest := oracle.smallestUnits(r, d, pool, nodePools)
		bound := roundUpNodes(c.Units, smallest)
		work := "preemptible"
		if !preemptible {
			work = "non-preemptible"
		}
		derivation := fmt.Sprintf("%s work (%s); %s; the queues' own caps sum to %s; smallest node %d units",
			work, how, strings.Join(c.Reason, ", "), showCap(c.Sum), smallest)
		if len(c.Reason) == 0 {
			errs = append(errs, fmt.Errorf("pool-flood: pool %s: the flood bought %d nvidia.com/gpu, but no rendered Queue routes to the pool (annotation %s): KAI admits nothing there",
				pool, total, nodePoolsAnnotation))
		} else if total > bound {
			errs = append(errs, fmt.Errorf("pool-flood: pool %s: the flood bought %d nvidia.com/gpu (NodePools %v), KAI admits at most %s there, %d in whole nodes: Karpenter buys GPUs no queue can use (%s)",
				pool, total, nodePools, showCap(c.Units), bound, derivation))
		} else if c.Exact && total < bound {
			errs = append(errs, fmt.Errorf("pool-flood: pool %s: the flood stopped at %d nvidia.com/gpu (NodePools %v), below the %s KAI admits there (%d in whole nodes): admitted work would stay pending (%s)",
				pool, total, nodePools, showCap(c.Units), bound, derivation))
		}
		if last == nil || len(last.PodErrors) == 0 {
			errs = append(errs, fmt.Errorf("pool-flood: pool %s: the flood of %d+2 unit pods per round left no pod pending: the limit did not stop it", pool, units))
		}
	}
	return errs
}

func firstPodError(r *Round) string {
	var msgs []string
	for _, e := range r.PodErrors {
		msgs = append(msgs, e.Error())
	}
	sort.Strings(msgs)
	if len(msgs) == 0 {
		return "no pod error"
	}
	return msgs[0]
}

func describe(ls []Launched) string {
	count := map[string]int{}
	for _, l := range ls {
		count[l.NodePool()+":"+l.InstanceType()+"/"+l.CapacityType()]++
	}
	var parts []string
	for _, k := range sortedKeys(count) {
		parts = append(parts, fmt.Sprintf("%dx %s", count[k], k))
	}
	if len(parts) == 0 {
		return "no node"
	}
	return strings.Join(parts, ", ")
}

// ---- b, g. overlays ----

// scenarioOverlayUnits: for every NodeOverlay that sets nvidia.com/gpu, one pod of one unit on
// its pool launches a node of an overlaid type whose NodeClaim capacity is the overlay's value
// (capacity.json advertisedPerNode), and every time-sliced pool (advertised > GPUs) has one.
func scenarioOverlayUnits(r *Render, d *InstanceData) []error {
	var errs []error
	for _, pool := range r.Capacity.Pools {
		if !lo.Contains(slicedPools(r), pool.Name) {
			continue
		}
		h, herrs := newHarness(r, d)
		if herrs != nil {
			return append(errs, herrs...)
		}
		var taints []corev1.Taint
		for _, np := range nodePoolsOf(r, pool.Name) {
			taints = append(taints, h.NodePools[np].Spec.Template.Spec.Taints...)
		}
		template := PoolTemplate(pool.Name, taints)
		round, err := h.Provision(UnitPod(template, "default", "overlay-"+pool.Name, rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")))
		if err != nil {
			errs = append(errs, fmt.Errorf("pool %s: %w", pool.Name, err))
			continue
		}
		if len(round.Launched) != 1 {
			errs = append(errs, fmt.Errorf("pool %s: one unit pod launched %d nodes (%s): %s", pool.Name, len(round.Launched), describe(round.Launched), firstPodError(round)))
			continue
		}
		l := round.Launched[0]
		it := l.InstanceType()
		q := l.NodeClaim.Status.Capacity[gpu]
		want := pool.AdvertisedPerNode[it][string(gpu)]
		if q.Value() != int64(want) {
			msg := fmt.Sprintf("pool %s: NodeClaim of %s has status.capacity nvidia.com/gpu %d, capacity.json advertisedPerNode %d", pool.Name, it, q.Value(), want)
			if q.Value() == int64(gpuCount(d, it)) {
				msg += fmt.Sprintf(": charged whole GPUs (%d), no NodeOverlay applied", gpuCount(d, it))
			}
			if hasOverlayFor(r, pool.Name, it) {
				// g: the overlay exists and matches, yet its value did not replace the type's
				// count (karpenter v1.15.0 pkg/cloudprovider/types.go L373-376 lo.Assign replaces;
				// pkg/apis/v1alpha1/nodeoverlay.go L81-83 documents the contrary).
				msg += ": a Karpenter bump changed overlay replacement: see README"
			}
			errs = append(errs, fmt.Errorf("%s", msg))
		}
	}
	return errs
}

func hasOverlayFor(r *Render, pool, instanceType string) bool {
	for _, o := range r.Kind("NodeOverlay") {
		reqs, _, _ := unstructuredSlice(o.Object.Object, "spec", "requirements")
		poolOK, typeOK := false, false
		for _, x := range reqs {
			m := x.(map[string]any)
			vals, _ := m["values"].([]any)
			has := func(s string) bool {
				for _, v := range vals {
					if v == s {
						return true
					}
				}
				return false
			}
			switch m["key"] {
			case poolLabel:
				poolOK = has(pool)
			case corev1.LabelInstanceTypeStable:
				typeOK = has(instanceType)
			}
		}
		capacity, _, _ := unstructuredMap(o.Object.Object, "spec", "capacity")
		if poolOK && typeOK && capacity[string(gpu)] != nil {
			return true
		}
	}
	return false
}

func unstructuredMap(obj map[string]any, fields ...string) (map[string]any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = m[f]
	}
	m, ok := cur.(map[string]any)
	return m, ok, nil
}

// ---- c. EFA gang ----

func efaPools(r *Render) []string {
	seen := map[string]bool{}
	for _, d := range r.Kind("NodePool") {
		labels := d.Object.GetLabels()
		_ = labels
		tl, _, _ := unstructuredMap(d.Object.Object, "spec", "template", "metadata", "labels")
		if tl["eks-gpu-platform.io/efa"] == "true" {
			seen[fmt.Sprint(tl[poolLabel])] = true
		}
	}
	return sortedKeys(seen)
}

// scenarioEFAGang: every queue routed to an EFA pool has one gang template (examples/: a Job with
// pod affinity in its namespace), pinned to one of its EFA pools; the template asks at most the
// queue's largest gang (what KAI admits to the queue, from the rendered Queues, within the pool's
// NodePool limits: parallelism x GPUs per pod), and a gang of that many GPUs, placed as
// the Job controller creates it, gets its nodes in the pinned pool, in one zone and one type,
// from EFA launch templates. The product writes one training template per queue (not one per
// EFA pool it routes to): components/offline/examples.py.
func scenarioEFAGang(r *Render, d *InstanceData) []error {
	workloads, err := r.Workloads()
	if err != nil {
		return []error{err}
	}
	efa := efaPools(r)
	queues, err := renderQueues(r)
	if err != nil {
		return []error{err}
	}
	classes := map[string]int32{}
	for _, d := range r.Kind("PriorityClass") {
		v, _, _ := unstructuredInt(d.Object.Object, "value")
		classes[d.Object.GetName()] = int32(v)
	}
	var errs []error
	for _, name := range sortedKeys(queues) {
		q := queues[name]
		mine := lo.Filter(q.Pools, func(p string, _ int) bool { return lo.Contains(efa, p) })
		if len(mine) == 0 {
			continue
		}
		var gangs []*Workload
		for i, w := range workloads {
			if w.Kind == "Job" && w.Template.Namespace == q.Name && w.Template.Spec.Affinity != nil && w.Template.Spec.Affinity.PodAffinity != nil {
				gangs = append(gangs, &workloads[i])
			}
		}
		if len(gangs) != 1 {
			errs = append(errs, fmt.Errorf("queue %s (EFA pools %v): %d gang Job templates (with pod affinity) in examples/, want 1", q.Name, mine, len(gangs)))
			continue
		}
		gang := gangs[0]
		if len(gang.Pools) != 1 || !lo.Contains(mine, gang.Pools[0]) {
			errs = append(errs, fmt.Errorf("queue %s: gang template %s pins pools %v, want one of its EFA pools %v", q.Name, gang.Name, gang.Pools, mine))
			continue
		}
		pool := gang.Pools[0]
		perPod := int64(0)
		for _, c := range gang.Template.Spec.Containers {
			g := c.Resources.Requests[gpu]
			perPod += g.Value()
		}
		// The largest gang: what KAI admits to the queue at once (its gpu.limit, and its
		// gpu.quota for non-preemptible work, cut by every ancestor's: oracle_test.go), within
		// the EFA pool's NodePool limits (the rendered NodePools), in whole pods of the template.
		preemptible, how := kaiPreemptible(*gang, classes)
		kai := queueCeiling(queues, q.Name, preemptible)
		poolLimit := int64(0)
		for _, dnp := range r.Kind("NodePool") {
			var np karpv1.NodePool
			if err := fromUnstructured(dnp.Object, &np); err == nil && np.Spec.Template.Labels[poolLabel] == pool {
				l := np.Spec.Limits[gpu]
				poolLimit += l.Value()
			}
		}
		largest := int64(math.Min(kai, float64(poolLimit)))
		if perPod > 0 {
			largest -= largest % perPod
		}
		if perPod == 0 || largest == 0 {
			errs = append(errs, fmt.Errorf("EFA pool %s, queue %s: no gang of %d-GPU pods fits what KAI admits (%s, %s) within the pool's NodePool limits (%d)", pool, q.Name, perPod, showCap(kai), how, poolLimit))
			continue
		}
		n := int(largest / perPod)
		if gang.Replicas > n {
			errs = append(errs, fmt.Errorf("EFA pool %s, queue %s: gang template %s runs %d pods x %d GPUs, more than the queue's largest gang (KAI admits %s, %s; the pool's NodePool limits %d: %d GPUs, %d pods)",
				pool, q.Name, gang.Name, gang.Replicas, perPod, showCap(kai), how, poolLimit, largest, n))
		}
		h, herrs := newHarness(r, d)
		if herrs != nil {
			return append(errs, herrs...)
		}
		round, err := h.Provision(gang.Pods(n)...)
		if err != nil {
			errs = append(errs, fmt.Errorf("EFA pool %s: %w", pool, err))
			continue
		}
		// Pods that found a reserved offering already reserved in this round are retried in a
		// later scheduling round, where the pool's other capacity types are tried (Karpenter's
		// strict reserved-offering mode: karpenter v1.15.0
		// pkg/controllers/provisioning/scheduling/nodeclaim.go L379-384): run the rounds the
		// provisioner would, while they launch.
		for i := 0; i < 5 && len(round.PodErrors) > 0 && len(round.Launched) > 0; i++ {
			if err := h.waitBound(round.Launched); err != nil {
				errs = append(errs, fmt.Errorf("EFA pool %s: %w", pool, err))
				break
			}
			next, err := h.Provision()
			if err != nil {
				errs = append(errs, fmt.Errorf("EFA pool %s: %w", pool, err))
				break
			}
			next.Launched = append(round.Launched, next.Launched...)
			round = next
		}
		if len(round.PodErrors) > 0 {
			var first error
			for _, e := range round.PodErrors {
				first = e
				break
			}
			errs = append(errs, fmt.Errorf("EFA pool %s, queue %s: %d of %d pods of the gang (%d GPUs, the largest gang) got no node%s (placed: %s): %s",
				pool, q.Name, len(round.PodErrors), n, largest, explainRandomDomain(first, nil), describe(round.Launched), firstPodError(round)))
		}
		for _, l := range round.Launched {
			if got := l.NodeClaim.Labels[poolLabel]; got != pool {
				errs = append(errs, fmt.Errorf("EFA pool %s, queue %s: a node of the gang launched in pool %q (NodePool %s)", pool, q.Name, got, l.NodePool()))
			}
		}
		zones := lo.Uniq(lo.Map(round.Launched, func(l Launched, _ int) string { return l.Zone() }))
		types := lo.Uniq(lo.Map(round.Launched, func(l Launched, _ int) string { return l.InstanceType() }))
		if len(zones) > 1 || len(types) > 1 {
			errs = append(errs, fmt.Errorf("EFA pool %s: gang spread over zones %v and types %v", pool, zones, types))
		}
		errs = append(errs, h.checkEFALaunches(pool, round, d)...)
	}
	return errs
}

// checkEFALaunches: every launch template Karpenter created for the pool's NodeClaims carries one
// EFA interface per network card of the type (MaximumEfaInterfaces, all cards), and every
// CreateFleet request places the instance in the placement group.
func (h *Harness) checkEFALaunches(pool string, round *Round, d *InstanceData) []error {
	var errs []error
	var lts []*ec2.CreateLaunchTemplateInput
	h.AWS.EC2API.CreateLaunchTemplateBehavior.CalledWithInput.ForEach(func(in *ec2.CreateLaunchTemplateInput) { lts = append(lts, in) })
	fleets := h.AWS.EC2API.CreateFleetBehavior.CalledWithInput.Len()
	if len(round.Launched) > 0 && len(lts) == 0 {
		errs = append(errs, fmt.Errorf("EFA pool %s: no CreateLaunchTemplate call recorded", pool))
	}
	for _, lt := range lts {
		data := lt.LaunchTemplateData
		efa := 0
		cards := map[int32]bool{}
		for _, ni := range data.NetworkInterfaces {
			if t := aws.ToString(ni.InterfaceType); t == "efa" || t == "efa-only" {
				efa++
				cards[aws.ToInt32(ni.NetworkCardIndex)] = true
			}
		}
		for _, it := range lo.Uniq(lo.Map(round.Launched, func(l Launched, _ int) string { return l.InstanceType() })) {
			info := d.ByName[it]
			want := int(aws.ToInt32(info.NetworkInfo.EfaInfo.MaximumEfaInterfaces))
			if efa != want || len(cards) != int(aws.ToInt32(info.NetworkInfo.MaximumNetworkCards)) {
				errs = append(errs, fmt.Errorf("EFA pool %s: launch template %s requests %d EFA interfaces on %d network cards; %s has %d EFA interfaces on %d cards",
					pool, aws.ToString(lt.LaunchTemplateName), efa, len(cards), it, want, aws.ToInt32(info.NetworkInfo.MaximumNetworkCards)))
			}
		}
		if data.Placement == nil || aws.ToString(data.Placement.GroupName) == "" && aws.ToString(data.Placement.GroupId) == "" {
			errs = append(errs, fmt.Errorf("EFA pool %s: launch template %s has no placement group", pool, aws.ToString(lt.LaunchTemplateName)))
		}
	}
	if len(round.Launched) > 0 && fleets == 0 {
		errs = append(errs, fmt.Errorf("EFA pool %s: no CreateFleet call recorded", pool))
	}
	return errs
}

// ---- helpers for quantities ----

func qty(s string) resource.Quantity { return resource.MustParse(s) }

var instanceTypeDomain = regexp.MustCompile(`node\.kubernetes\.io/instance-type In \[([^\]]*)\]`)

// explainRandomDomain: a gang template's required pod affinity on node.kubernetes.io/instance-type
// (self-selecting, no pod placed yet) makes Karpenter v1.15.0 bootstrap the domain with a random
// instance type of ANY NodePool (pkg/controllers/provisioning/scheduling/topologygroup.go
// L365-386 nextDomainAffinity; topology.go L105-135 buildDomainGroups: every NodePool's types).
// When the error shows such a domain outside the pool's types, say so.
func explainRandomDomain(err error, poolTypes []string) string {
	if err == nil {
		return ""
	}
	m := instanceTypeDomain.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	picked := strings.Fields(m[1])
	if len(poolTypes) > 0 {
		if out, _ := lo.Difference(picked, poolTypes); len(out) == 0 {
			return ""
		}
	}
	return fmt.Sprintf(" (Karpenter bootstrapped the template's instance-type pod affinity with random domains %v, "+
		"drawn from every NodePool's types: karpenter v1.15.0 scheduling/topologygroup.go L365-386; "+
		"one zone and one instance type per gang is not guaranteed)", picked)
}

// offerings: what Karpenter's cloud provider offers for the NodePool (for a NodePool that
// launched nothing): each type's available offerings.
func (h *Harness) offerings(nodePool string) string {
	np := h.NodePools[nodePool]
	its, err := h.Cloud.GetInstanceTypes(h.Ctx, np)
	if err != nil {
		return fmt.Sprintf("GetInstanceTypes(%s): %v", nodePool, err)
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	var parts []string
	for _, it := range its {
		if reqs.Has(corev1.LabelInstanceTypeStable) && !reqs.Get(corev1.LabelInstanceTypeStable).Has(it.Name) {
			continue
		}
		avail := it.Offerings.Available().Compatible(reqs)
		parts = append(parts, fmt.Sprintf("%s: %d available offerings in the NodePool's zones and capacity types", it.Name, len(avail)))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("NodePool %s: the cloud provider returns none of its instance types (no offering in the region's instance data)", nodePool)
	}
	return "NodePool " + nodePool + ": " + strings.Join(parts, ", ")
}

// slicedPools: the pools whose nodes advertise other than their GPU count (capacity.json
// advertisedPerNode vs gpusPerNode): time-sliced and MIG pools.
func slicedPools(r *Render) []string {
	var out []string
	for _, pool := range r.Capacity.Pools {
		if len(pool.DRADevicesPerNode) > 0 {
			continue // a DRA pool advertises no nvidia.com/gpu at all: dra-claim judges it
		}
		for t, adv := range pool.AdvertisedPerNode {
			if adv[string(gpu)] != pool.GPUsPerNode[t] {
				out = append(out, pool.Name)
				break
			}
		}
	}
	return out
}

// ---- EFA taint ----

// scenarioEFATaint: for every EFA pool, a one-GPU pod that requires the pool's label and tolerates
// only nvidia.com/gpu (what a GPU workload without EFA carries) gets no NodeClaim: the EFA
// NodePools' vpc.amazonaws.com/efa taint keeps it out (Karpenter's scheduler tolerates a NodePool's
// taints or skips it: karpenter v1.15.0 pkg/controllers/provisioning/scheduling/nodeclaimtemplate
// and scheduling.Taints.ToleratesPod).
func scenarioEFATaint(r *Render, d *InstanceData) []error {
	var errs []error
	for _, pool := range efaPools(r) {
		h, herrs := newHarness(r, d)
		if herrs != nil {
			return append(errs, herrs...)
		}
		template := PoolTemplate(pool, []corev1.Taint{{Key: string(gpu), Effect: corev1.TaintEffectNoSchedule}})
		round, err := h.Provision(UnitPod(template, "default", "no-efa-"+pool, rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")))
		if err != nil {
			errs = append(errs, fmt.Errorf("efa-taint: EFA pool %s: %w", pool, err))
			continue
		}
		if len(round.Launched) > 0 {
			var taints []string
			for _, l := range round.Launched {
				for _, t := range h.NodePools[l.NodePool()].Spec.Template.Spec.Taints {
					taints = append(taints, t.Key+":"+string(t.Effect))
				}
			}
			errs = append(errs, fmt.Errorf("efa-taint: EFA pool %s: a GPU pod tolerating only nvidia.com/gpu launched %s: the NodePool's taints %v lack vpc.amazonaws.com/efa:NoSchedule, so non-EFA work buys EFA nodes",
				pool, describe(round.Launched), lo.Uniq(taints)))
		}
		if len(round.PodErrors) != 1 {
			errs = append(errs, fmt.Errorf("efa-taint: EFA pool %s: the pod tolerating only nvidia.com/gpu is not pending (%d pod errors)", pool, len(round.PodErrors)))
		}
	}
	return errs
}

// waitBound waits until the client lists every pod of the launches as bound: the next
// scheduling round must not see a pod of this round as pending (the provisioner lists pods
// through the client: karpenter v1.15.0 pkg/controllers/provisioning/provisioner.go L202-207).
func (h *Harness) waitBound(launched []Launched) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pods := &corev1.PodList{}
		if err := h.Client.List(h.Ctx, pods); err != nil {
			return err
		}
		bound := lo.SliceToMap(pods.Items, func(p corev1.Pod) (string, bool) { return p.Namespace + "/" + p.Name, p.Spec.NodeName != "" })
		missing := 0
		for _, l := range launched {
			for _, p := range l.Pods {
				if !bound[p.Namespace+"/"+p.Name] {
					missing++
				}
			}
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d bound pods still listed as pending after 10 s", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
