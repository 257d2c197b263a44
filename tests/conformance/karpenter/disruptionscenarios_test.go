package karpenter

// The disruption scenarios: Karpenter v1.15.0's disruption controller, orchestration queue and
// nodeclaim disruption/expiration controllers (disruptionloop_test.go) on the dev and prod
// renders' NodePools, judged against the documented promises (disruptionpromises_test.go).

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
)

func init() {
	scenarios = append(scenarios,
		Scenario{
			Name:   "disruption-consolidate-after",
			Claim:  "an emptied node of every NodePool is kept until its pool's promised consolidateAfter (5m) has passed on the clock, then the disruption controller deletes it (Empty), within the pool's budget",
			Stacks: devAndProd,
			Run:    scenarioConsolidateAfter,
		},
		Scenario{
			Name:   "disruption-drift-budgets",
			Claim:  "after a control-plane minor upgrade (1.35 to 1.36) every node is Drifted; non-preemptible pools replace none 08:00-18:00 UTC Mon-Fri and one at a time after, preemptible pools 10% at a time",
			Stacks: devAndProd,
			Run:    scenarioDriftBudgets,
		},
		Scenario{
			Name:   "disruption-do-not-disrupt",
			Claim:  "a KAI non-preemptible pod is annotated do-not-disrupt by the render's admission policy and keeps its node from graceful disruption; drift and expiration (eventual) still replace it, bounded by the 48h terminationGracePeriod",
			Stacks: devAndProd,
			Run:    scenarioDoNotDisrupt,
		},
	)
}

func devAndProd(r *Render) bool { return r.Stack == "dev" || r.Stack == "prod" }

// launchOn provisions the pods (one round of the real provisioner), then initializes each node
// and runs its pods; it returns the launches by NodePool.
func launchOn(h *Harness, l *Loop, scenario string, pods []*corev1.Pod) (map[string][]Launched, []error) {
	return launchOptional(h, l, scenario, pods, nil)
}

// launchOptional is launchOn where the optional pods may stay pending because their NodePool's
// limit holds no further node (provisioner.go: limits), which is reported, not an error.
func launchOptional(h *Harness, l *Loop, scenario string, pods []*corev1.Pod, optional map[string]bool) (map[string][]Launched, []error) {
	// One pod per round: a later round charges the NodePool's limit with the launched node's real
	// capacity, not the largest of a new NodeClaim's options (scheduler.go subtractMax).
	var errs []error
	var all []Launched
	for _, pod := range pods {
		round, err := h.Provision(pod)
		if err != nil {
			return nil, []error{fmt.Errorf("%s: %w", scenario, err)}
		}
		for p, perr := range round.PodErrors {
			if optional[p.Name] && strings.Contains(perr.Error(), "exceed limits") {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: pod %s (NodePool %s) got no node: %v", scenario, p.Name, p.Spec.NodeSelector[karpv1.NodePoolLabelKey], perr))
		}
		all = append(all, round.Launched...)
	}
	out := map[string][]Launched{}
	for _, ln := range all {
		if err := l.Initialize(ln.NodeClaim.Name); err != nil {
			return nil, append(errs, err)
		}
		for _, p := range ln.Pods {
			if err := l.Run(p); err != nil {
				return nil, append(errs, err)
			}
		}
		out[ln.NodePool()] = append(out[ln.NodePool()], ln)
	}
	if err := l.Sync(); err != nil {
		errs = append(errs, err)
	}
	return out, errs
}

// ---- consolidateAfter and emptiness ----

func scenarioConsolidateAfter(r *Render, d *InstanceData) []error {
	const sc = "disruption-consolidate-after"
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	promised, err := promises(h)
	if err != nil {
		return []error{err}
	}
	l := newLoop(h, nextWeekday(time.Saturday, 12))
	var pods []*corev1.Pod
	for _, np := range sortedKeys(h.NodePools) {
		pods = append(pods, nodePoolPod(h, np, "ca-"+np, ""))
	}
	launched, errs := launchOn(h, l, sc, pods)
	if launched == nil {
		return errs
	}
	// The work finishes at t0: each node is empty but for nothing.
	t0 := l.Clock.Now()
	for _, np := range sortedKeys(launched) {
		for _, ln := range launched[np] {
			for _, p := range ln.Pods {
				if err := l.Finish(p); err != nil {
					return append(errs, err)
				}
			}
		}
	}
	minAfter := lo.Min(lo.Map(lo.Values(promised), func(p Promise, _ int) time.Duration { return p.ConsolidateAfter }))
	maxAfter := lo.Max(lo.Map(lo.Values(promised), func(p Promise, _ int) time.Duration { return p.ConsolidateAfter }))
	// Before: one second short of the promise.
	l.Clock.SetTime(t0.Add(minAfter - time.Second))
	if err := l.MarkClaims(); err != nil {
		return append(errs, err)
	}
	for _, np := range sortedKeys(launched) {
		for _, ln := range launched[np] {
			if st, _, err := l.condition(ln.NodeClaim.Name, karpv1.ConditionTypeConsolidatable); err != nil {
				errs = append(errs, err)
			} else if st == metav1.ConditionTrue {
				errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: node %s is Consolidatable %s after its last pod finished; promised: %s; %s",
					sc, poolOf(h, np), np, ln.Node.Name, minAfter-time.Second, promised[np], rendered(h.NodePools[np])))
			}
		}
	}
	cmds, err := l.Disrupt()
	if err != nil {
		return append(errs, err)
	}
	for _, c := range cmds {
		errs = append(errs, fmt.Errorf("%s: the disruption controller disrupted %s (%s) %s after the last pod finished, before any pool's consolidateAfter (%s)",
			sc, candidateNames(c), c.Reason(), minAfter-time.Second, minAfter))
	}
	// After: one second past the promise.
	l.Clock.SetTime(t0.Add(maxAfter + time.Second))
	if err := l.MarkClaims(); err != nil {
		return append(errs, err)
	}
	for _, np := range sortedKeys(launched) {
		for _, ln := range launched[np] {
			if st, _, err := l.condition(ln.NodeClaim.Name, karpv1.ConditionTypeConsolidatable); err != nil {
				errs = append(errs, err)
			} else if st != metav1.ConditionTrue {
				errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: empty node %s is not Consolidatable %s after its last pod finished (Consolidatable=%s); promised: %s; %s",
					sc, poolOf(h, np), np, ln.Node.Name, maxAfter+time.Second, st, promised[np], rendered(h.NodePools[np])))
			}
		}
	}
	cmds, err = l.Disrupt()
	if err != nil {
		return append(errs, err)
	}
	disrupted := map[string][]string{}
	for _, c := range cmds {
		if c.Reason() != karpv1.DisruptionReasonEmpty {
			errs = append(errs, fmt.Errorf("%s: the disruption controller's first command is %s, not Empty: %s", sc, c.Reason(), candidateNames(c)))
		}
		deleted, err := l.Execute(c)
		if err != nil {
			return append(errs, err)
		}
		for _, cand := range c.Candidates {
			if lo.Contains(deleted, cand.NodeClaim.Name) {
				np := cand.NodeClaim.Labels[karpv1.NodePoolLabelKey]
				disrupted[np] = append(disrupted[np], cand.Node.Name)
			}
		}
	}
	for _, np := range sortedKeys(launched) {
		want := promised[np].AtOnce(len(launched[np]))
		if got := len(disrupted[np]); got != want {
			errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: the disruption controller deleted %d of its %d empty node(s) %s after they emptied, want %d; promised: %s; %s",
				sc, poolOf(h, np), np, got, len(launched[np]), maxAfter+time.Second, want, promised[np], rendered(h.NodePools[np])))
		}
	}
	return errs
}

func candidateNames(c *disruption.Command) string {
	return strings.Join(lo.Map(c.Candidates, func(x *disruption.Candidate, _ int) string {
		return fmt.Sprintf("%s (NodePool %s)", x.Node.Name, x.NodeClaim.Labels[karpv1.NodePoolLabelKey])
	}), ", ")
}

// ---- drift and budgets ----

// upgrade launches on minor `from`, then moves the control plane to `to`: the EC2NodeClasses
// resolve the pinned alias to the new minor's AMIs (only recorded releases exist) and the
// nodeclaim disruption controller marks the nodes Drifted.
func upgradeAMIs(h *Harness, table *amiReleases, minor string) error {
	ctx, err := h.setClusterMinor(minor)
	if err != nil {
		return err
	}
	bad, err := h.amisNotReady(ctx)
	if err != nil {
		return err
	}
	for name, why := range bad {
		return fmt.Errorf("Kubernetes %s: EC2NodeClass %s alias %s does not resolve through the recorded releases (testdata/ami-releases.yaml): %s", minor, name, classAliases(h.Render)[name], why)
	}
	return nil
}

// drainDrift runs the disruption controller in rounds: passes until one starts nothing (drift
// starts one command per pass: drift.go ComputeCommands), which is what runs at once; then each
// command's replacements are initialized and the queue deletes its candidates; the terminated
// nodes and their pods are removed (termination is not run). It returns the nodes disrupted and
// the most in flight at once, per NodePool.
func drainDrift(l *Loop, sc string) (map[string]int, map[string]int, []error) {
	disrupted, most := map[string]int{}, map[string]int{}
	var errs []error
	for round := 0; round < 12; round++ {
		// Passes until one starts nothing, each command's replacements launched (the controller
		// waits for an unsynced state otherwise): what is in flight together.
		var started []*disruption.Command
		for pass := 0; pass < 12; pass++ {
			cmds, err := l.Disrupt()
			if err != nil {
				return nil, nil, append(errs, err)
			}
			for _, c := range cmds {
				if err := l.LaunchReplacements(c); err != nil {
					return nil, nil, append(errs, err)
				}
			}
			if len(cmds) == 0 {
				break
			}
			started = append(started, cmds...)
		}
		if len(started) == 0 {
			break
		}
		inFlight := map[string]int{}
		for _, c := range started {
			if c.Reason() != karpv1.DisruptionReasonDrifted {
				errs = append(errs, fmt.Errorf("%s: unexpected %s command: %s", sc, c.Reason(), candidateNames(c)))
			}
			for _, cand := range c.Candidates {
				inFlight[cand.NodeClaim.Labels[karpv1.NodePoolLabelKey]]++
			}
		}
		for np, n := range inFlight {
			most[np] = max(most[np], n)
		}
		for _, c := range started {
			if err := l.InitializeReplacements(c); err != nil {
				return nil, nil, append(errs, err)
			}
			deleted, err := l.Execute(c)
			if err != nil {
				return nil, nil, append(errs, err)
			}
			for _, cand := range c.Candidates {
				if lo.Contains(deleted, cand.NodeClaim.Name) {
					disrupted[cand.NodeClaim.Labels[karpv1.NodePoolLabelKey]]++
					if err := l.terminate(cand.Node.Name); err != nil {
						return nil, nil, append(errs, err)
					}
				}
			}
		}
	}
	return disrupted, most, errs
}

// terminate stands in for the termination controller once it has drained the node: the node and
// the pods bound to it are deleted.
func (l *Loop) terminate(nodeName string) error {
	pods := &corev1.PodList{}
	if err := l.h.Client.List(l.h.Ctx, pods); err != nil {
		return err
	}
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == nodeName {
			if err := l.h.Client.Delete(l.h.Ctx, &pods.Items[i]); err != nil {
				return err
			}
		}
	}
	node := &corev1.Node{}
	if err := l.h.Client.Get(l.h.Ctx, types.NamespacedName{Name: nodeName}, node); err == nil {
		if err := l.h.Client.Delete(l.h.Ctx, node); err != nil {
			return err
		}
	}
	return l.Sync()
}

func scenarioDriftBudgets(r *Render, d *InstanceData) []error {
	const sc = "disruption-drift-budgets"
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	promised, err := promises(h)
	if err != nil {
		return []error{err}
	}
	table, err := loadAMIReleases()
	if err != nil {
		return []error{err}
	}
	h.seedRecordedAMIs(table)
	if err := upgradeAMIs(h, table, "1.35"); err != nil {
		return []error{fmt.Errorf("%s: %w", sc, err)}
	}
	monday := nextWeekday(time.Monday, 9)
	l := newLoop(h, monday)
	var pods []*corev1.Pod
	optional := map[string]bool{}
	for _, np := range sortedKeys(h.NodePools) {
		// The second pod stays pending where its NodePool's limit holds one node only (notebooks:
		// nvidia.com/gpu 4, its one time-sliced node). Drift's simulation schedules the pending pods
		// with the candidate's (karpenter v1.15.0 pkg/controllers/disruption/helpers.go L83, v1.14.1
		// L73) in Karpenter's queue order (scheduler.go L490 Solve): CPU, then memory descending,
		// then creationTimestamp (1 s resolution), then pod UID (pkg/controllers/provisioning/
		// scheduling/queue.go L72-107, the same in both versions). The first placed takes the one
		// node the limit allows (scheduler.go L737-747, L815 subtractMax); if that is the pending
		// pod, the candidate's pod gets "all available instance types exceed limits" and drift is
		// Blocked (drift.go L105-108). With equal requests and both pods created within one second
		// the winner was the random UID: the scenario flaked. A smaller request puts the pending pod
		// last, as the promise (a drifted node replaced after the window) presumes;
		// docs/node-pools.md says what a pending pod that sorts first does to drift in a pool at its
		// limit.
		b := nodePoolPod(h, np, "drift-b-"+np, np)
		b.Spec.Containers[0].Resources.Requests = rl("cpu", "50m", "memory", "128Mi")
		pods = append(pods, nodePoolPod(h, np, "drift-a-"+np, np), b)
		optional["drift-b-"+np] = true
	}
	launched, errs := launchOptional(h, l, sc, pods, optional)
	if launched == nil {
		return errs
	}
	if err := l.MarkClaims(); err != nil {
		return append(errs, err)
	}
	for _, np := range sortedKeys(launched) {
		for _, ln := range launched[np] {
			if st, why, _ := l.condition(ln.NodeClaim.Name, karpv1.ConditionTypeDrifted); st == metav1.ConditionTrue {
				errs = append(errs, fmt.Errorf("%s: NodePool %s: node %s is Drifted (%s) before any change", sc, np, ln.Node.Name, why))
			}
		}
	}
	if err := upgradeAMIs(h, table, clusterMinor); err != nil {
		return append(errs, fmt.Errorf("%s: %w", sc, err))
	}
	if err := l.MarkClaims(); err != nil {
		return append(errs, err)
	}
	for _, np := range sortedKeys(launched) {
		for _, ln := range launched[np] {
			if st, why, _ := l.condition(ln.NodeClaim.Name, karpv1.ConditionTypeDrifted); st != metav1.ConditionTrue || why != "AMIDrift" {
				errs = append(errs, fmt.Errorf("%s: NodePool %s: node %s (image %s) is not Drifted/AMIDrift after the control plane went 1.35 to %s (Drifted=%s %s)",
					sc, np, ln.Node.Name, ln.NodeClaim.Status.ImageID, clusterMinor, st, why))
			}
		}
	}
	check := func(when string, blocked bool) {
		disrupted, most, derrs := drainDrift(l, sc)
		errs = append(errs, derrs...)
		for _, np := range sortedKeys(launched) {
			p, n := promised[np], len(launched[np])
			want := n
			if blocked && p.DriftBlocked {
				want = 0
			}
			if disrupted[np] != want {
				errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: %s the disruption controller replaced %d of its %d drifted node(s), want %d; promised: %s; %s",
					sc, poolOf(h, np), np, when, disrupted[np], n, want, p, rendered(h.NodePools[np])))
			}
			if atOnce := p.AtOnce(n); most[np] > atOnce {
				errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: %s %d drifted nodes were being disrupted at once, promised at most %d; %s; %s",
					sc, poolOf(h, np), np, when, most[np], atOnce, p, rendered(h.NodePools[np])))
			}
		}
	}
	check(fmt.Sprintf("at %s (Monday 09:00 UTC)", monday.Format(time.RFC3339)), true)
	// 18:00 UTC: the Drifted window (08:00 + 10h) has closed; only the blocked pools' nodes are
	// left.
	evening := monday.Add(9*time.Hour + time.Minute)
	l.Clock.SetTime(evening)
	for np, p := range promised {
		if !p.DriftBlocked {
			delete(launched, np)
		}
	}
	check(fmt.Sprintf("at %s (Monday 18:01 UTC)", evening.Format(time.RFC3339)), false)
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}
