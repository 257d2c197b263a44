package karpenter

// do-not-disrupt and the eventual disruption class on a non-preemptible pool.
//
// Karpenter v1.15.0: graceful methods (emptiness, consolidation) refuse a candidate running a
// karpenter.sh/do-not-disrupt pod (pkg/controllers/state/statenode.go ValidatePodsDisruptable;
// pkg/controllers/disruption/types.go L192-211). Drift is the eventual class
// (pkg/controllers/disruption/drift.go L127-129), and an eventual candidate whose NodeClaim has a
// terminationGracePeriod ignores do-not-disrupt and PDBs (types.go L52, L204; upstream
// suite_test.go L1169 "should consider candidates that have do-not-disrupt pods scheduled with a
// terminationGracePeriod set for eventual disruption"). Expiration deletes the NodeClaim once
// expireAfter has passed, whatever runs on it (pkg/controllers/nodeclaim/expiration/
// controller.go). The terminationGracePeriod then bounds how long the drain may wait for such a
// pod (karpenter.sh docs "Disruption", terminationGracePeriod); termination is not run here.

import (
	"fmt"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
)

// queueNamespace: the namespace of the first leaf queue the render routes to pool (its Queue's
// node-pools annotation, oracle_test.go), and that queue: the tenancy policies refuse a pod that
// selects a pool routed to other queues only (components/scheduler/tenancy_policies.py), so the
// KAI pod of a pool is one of that pool's queues.
func queueNamespace(r *Render, pool string) (string, string) {
	queues, err := renderQueues(r)
	if err != nil {
		return "", ""
	}
	for _, d := range r.Kind("Namespace") {
		q := d.Object.GetLabels()["eks-gpu-platform.io/queue"]
		if kq := queues[q]; q != "" && kq != nil && lo.Contains(kq.Pools, pool) {
			return d.Object.GetName(), q
		}
	}
	return "", ""
}

// kaiNonPreemptiblePod: what a KAI user submits for serving: schedulerName kai-scheduler,
// priorityClassName inference (KAI's class, value 125 >= 100: non-preemptible, KAI v0.16.8
// pkg/common/podgroup/preemptible.go L10-26), restricted Pod Security, selecting its NodePool
// (created unbound: the tenancy policies refuse spec.nodeName at CREATE; bindPod binds it as a
// scheduler does).
func kaiNonPreemptiblePod(h *Harness, nodePool, ns, queue, name string) *corev1.Pod {
	p := nodePoolPod(h, nodePool, name, "")
	p.Namespace = ns
	p.Labels = map[string]string{"kai.scheduler/queue": queue}
	p.Spec.SchedulerName = "kai-scheduler"
	p.Spec.PriorityClassName = "inference"
	p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: lo.ToPtr(true), RunAsUser: lo.ToPtr(int64(65532)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: lo.ToPtr(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	return p
}

func scenarioDoNotDisrupt(r *Render, d *InstanceData) []error {
	const sc = "disruption-do-not-disrupt"
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	promised, err := promises(h)
	if err != nil {
		return []error{err}
	}
	var np string
	for _, name := range sortedKeys(h.NodePools) {
		if q, ok := h.NodePools[name].Spec.Limits[gpu]; ok && !q.IsZero() && !promised[name].Preemptible {
			np = name
			break
		}
	}
	if np == "" {
		return []error{fmt.Errorf("%s: render %s has no non-preemptible GPU NodePool", sc, r.Stack)}
	}
	p := promised[np]
	ns, queue := queueNamespace(r, poolOf(h, np))
	if ns == "" {
		return []error{fmt.Errorf("%s: render %s has no queue namespace routed to pool %s", sc, r.Stack, poolOf(h, np))}
	}
	table, err := loadAMIReleases()
	if err != nil {
		return []error{err}
	}
	h.seedRecordedAMIs(table)
	if err := upgradeAMIs(h, table, "1.35"); err != nil {
		return []error{fmt.Errorf("%s: %w", sc, err)}
	}
	if err := h.applyAdmissionPolicies(); err != nil {
		return []error{err}
	}
	l := newLoop(h, nextWeekday(time.Saturday, 12))
	units := []*corev1.Pod{nodePoolPod(h, np, "dnd-a", "dnd"), nodePoolPod(h, np, "dnd-b", "dnd")}
	launched, errs := launchOn(h, l, sc, units)
	if launched == nil {
		return errs
	}
	if len(launched[np]) != 2 {
		return append(errs, fmt.Errorf("%s: NodePool %s: two spread pods launched %d node(s)", sc, np, len(launched[np])))
	}
	where := fmt.Sprintf("pool %s, NodePool %s", poolOf(h, np), np)
	// The KAI pods, created through the render's admission policies.
	var kai []*corev1.Pod
	for i, ln := range launched[np] {
		pod := kaiNonPreemptiblePod(h, np, ns, queue, fmt.Sprintf("serve-%d", i))
		if err := h.Client.Create(h.Ctx, pod); err != nil {
			return append(errs, fmt.Errorf("%s: %s: the API server refused the KAI non-preemptible pod %s/%s: %v", sc, where, ns, pod.Name, err))
		}
		// Bound as a scheduler binds (harness_test.go bindPod: the pods/binding subresource, KAI's
		// binder does the same, kai-scheduler v0.16.8 pkg/binder/binding/binder.go L71-78).
		if err := bindPod(h.Ctx, h.Client, pod, ln.Node.Name); err != nil {
			return append(errs, fmt.Errorf("%s: %s: binding %s/%s to %s: %v", sc, where, ns, pod.Name, ln.Node.Name, err))
		}
		// The bound pod as the cache has it (its resourceVersion moved with the binding).
		h.bound = append(h.bound, client.ObjectKeyFromObject(pod))
		if err := h.awaitBound(); err != nil {
			return append(errs, fmt.Errorf("%s: %s: %v", sc, where, err))
		}
		if err := h.Client.Get(h.Ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return append(errs, fmt.Errorf("%s: %s: %v", sc, where, err))
		}
		if pod.Annotations[doNotDisrupt] != "true" {
			errs = append(errs, fmt.Errorf("%s: %s: the render's admission policies did not annotate KAI non-preemptible pod %s/%s (schedulerName kai-scheduler, priorityClassName inference) %s=\"true\"; annotations %v",
				sc, where, ns, pod.Name, doNotDisrupt, pod.Annotations))
		}
		if err := l.Run(pod); err != nil {
			return append(errs, err)
		}
		kai = append(kai, pod)
	}
	// The unit pods finish; each node keeps its KAI pod.
	t0 := l.Clock.Now()
	for _, u := range units {
		if err := l.Finish(u); err != nil {
			return append(errs, err)
		}
	}
	l.Clock.SetTime(t0.Add(p.ConsolidateAfter + time.Second))
	if err := l.MarkClaims(); err != nil {
		return append(errs, err)
	}
	// Graceful: Karpenter's own candidacy refuses the node, and the controller starts nothing.
	if err := h.candidate(launched[np][0].Node.Name); err == nil {
		errs = append(errs, fmt.Errorf("%s: %s: node %s running KAI pod %s/%s is a graceful (consolidation) candidate: do-not-disrupt does not protect it",
			sc, where, launched[np][0].Node.Name, ns, kai[0].Name))
	}
	cmds, err := l.Disrupt()
	if err != nil {
		return append(errs, err)
	}
	for _, c := range cmds {
		errs = append(errs, fmt.Errorf("%s: %s: %s started a %s command on %s while each node runs a do-not-disrupt KAI pod",
			sc, where, "the disruption controller", c.Reason(), candidateNames(c)))
	}
	// Eventual: the NodeClaims carry the pool's grace period, so drift goes ahead.
	for _, ln := range launched[np] {
		claim := &karpv1.NodeClaim{}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: ln.NodeClaim.Name}, claim); err != nil {
			return append(errs, err)
		}
		if tgp := claim.Spec.TerminationGracePeriod; tgp == nil || tgp.Duration != p.Grace {
			got := "none"
			if tgp != nil {
				got = tgp.Duration.String()
			}
			errs = append(errs, fmt.Errorf("%s: %s: NodeClaim %s has terminationGracePeriod %s, not the promised %s (a do-not-disrupt pod's drain would be cut short); promised: %s; %s",
				sc, where, claim.Name, got, p.Grace, p, rendered(h.NodePools[np])))
		}
	}
	if err := upgradeAMIs(h, table, clusterMinor); err != nil {
		return append(errs, fmt.Errorf("%s: %w", sc, err))
	}
	if err := l.MarkClaims(); err != nil {
		return append(errs, err)
	}
	cmds, err = l.Disrupt()
	if err != nil {
		return append(errs, err)
	}
	drifted := lo.Filter(cmds, func(c *disruption.Command, _ int) bool { return c.Reason() == karpv1.DisruptionReasonDrifted })
	if len(drifted) != 1 || len(drifted[0].Candidates) != 1 {
		errs = append(errs, fmt.Errorf("%s: %s: after the upgrade to %s the disruption controller started %d Drifted command(s), want exactly 1 on a node with a do-not-disrupt pod (eventual class, terminationGracePeriod %s); commands: %v; %s",
			sc, where, clusterMinor, len(drifted), p.Grace, lo.Map(cmds, func(c *disruption.Command, _ int) string { return string(c.Reason()) + ": " + candidateNames(c) }), rendered(h.NodePools[np])))
	}
	// Expiration: the other node goes once expireAfter has passed since it was created.
	var other *karpv1.NodeClaim
	for _, ln := range launched[np] {
		if len(drifted) == 1 && len(drifted[0].Candidates) == 1 && drifted[0].Candidates[0].NodeClaim.Name == ln.NodeClaim.Name {
			continue
		}
		other = &karpv1.NodeClaim{}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: ln.NodeClaim.Name}, other); err != nil {
			return append(errs, err)
		}
		break
	}
	if other == nil {
		return errs
	}
	for _, step := range []struct {
		at   time.Duration
		gone bool
	}{{p.ExpireAfter - time.Minute, false}, {p.ExpireAfter + time.Minute, true}} {
		l.Clock.SetTime(other.CreationTimestamp.Add(step.at))
		if _, err := l.Expiration.Reconcile(h.Ctx, other.DeepCopy()); err != nil {
			return append(errs, fmt.Errorf("expiration controller: %w", err))
		}
		gone, err := l.deleted(other.Name)
		if err != nil {
			return append(errs, err)
		}
		if gone != step.gone {
			errs = append(errs, fmt.Errorf("%s: %s: NodeClaim %s with do-not-disrupt KAI pod: deleted=%t %s after its creation, want %t; promised: %s; %s",
				sc, where, other.Name, gone, step.at, step.gone, p, rendered(h.NodePools[np])))
		}
	}
	return errs
}
