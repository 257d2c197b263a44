package karpenter

// What the project promises about disruption, per pool, written here from the docs (the oracle),
// not from the code that renders the NodePools: docs/node-pools.md L50-54 "Disruption defaults
// follow preemptible", and each pool's `preemptible` flag in the fixture stack
// (tests/fixtures/stacks/Pulumi.<stack>.yaml, which the root stacks the suite renders repeat).

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Promise is one pool's documented disruption behaviour.
type Promise struct {
	Preemptible      bool
	Policy           karpv1.ConsolidationPolicy
	ConsolidateAfter time.Duration
	ExpireAfter      time.Duration
	Grace            time.Duration
	// Percent of the pool's nodes disrupted at once (preemptible), else Nodes.
	Percent, Nodes int
	// DriftBlocked: drifted nodes are never replaced 08:00-18:00 UTC Monday to Friday.
	DriftBlocked bool
}

func promiseFor(preemptible bool) Promise {
	if preemptible {
		return Promise{true, karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, 5 * time.Minute, 168 * time.Hour, 4 * time.Hour, 10, 0, false}
	}
	return Promise{false, karpv1.ConsolidationPolicyWhenEmpty, 5 * time.Minute, 720 * time.Hour, 48 * time.Hour, 0, 1, true}
}

// AtOnce: how many of n nodes the promise lets Karpenter disrupt at once (a percentage rounds up:
// karpenter v1.15.0 pkg/apis/v1/nodepool.go L386-400, Budget.GetAllowedDisruptions,
// intstr.GetScaledValueFromIntOrPercent(..., true)).
func (p Promise) AtOnce(n int) int {
	if p.Preemptible {
		return int(math.Ceil(float64(n) * float64(p.Percent) / 100))
	}
	return min(p.Nodes, n)
}

func (p Promise) String() string {
	budget := fmt.Sprintf("%d node(s) at once", p.Nodes)
	if p.Preemptible {
		budget = fmt.Sprintf("%d%% of the nodes at once", p.Percent)
	}
	drift := ""
	if p.DriftBlocked {
		drift = ", no drift replacement 08:00-18:00 UTC Mon-Fri"
	}
	return fmt.Sprintf("preemptible=%t: %s after %s, expire after %s with a %s grace period, %s%s (docs/node-pools.md L50-54)",
		p.Preemptible, p.Policy, p.ConsolidateAfter, p.ExpireAfter, p.Grace, budget, drift)
}

// promises maps each NodePool of the render to its pool's promise, from the fixture stack's
// pools (by the NodePool's eks-gpu-platform.io/pool label).
func promises(h *Harness) (map[string]Promise, error) {
	path := filepath.Join(repoDir, "tests", "fixtures", "stacks", fmt.Sprintf("Pulumi.%s.yaml", h.Render.Stack))
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("render %s: the disruption promises need its fixture stack: %w", h.Render.Stack, err)
	}
	var stack struct {
		Config map[string]any `json:"config"`
	}
	if err := yaml.Unmarshal(data, &stack); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pools, _ := stack.Config["eks-gpu-platform:nodePools"].([]any)
	preemptible := map[string]bool{}
	for _, p := range pools {
		m, _ := p.(map[string]any)
		name, _ := m["name"].(string)
		v, _ := m["preemptible"].(bool)
		preemptible[name] = v
	}
	out := map[string]Promise{}
	for name, np := range h.NodePools {
		pool := np.Spec.Template.Labels[poolLabel]
		v, ok := preemptible[pool]
		if !ok {
			return nil, fmt.Errorf("NodePool %s: pool %q is not in %s", name, pool, path)
		}
		out[name] = promiseFor(v)
	}
	return out, nil
}

// rendered: the NodePool's disruption settings as rendered, for messages.
func rendered(np *karpv1.NodePool) string {
	d := np.Spec.Disruption
	var budgets []string
	for _, b := range d.Budgets {
		s := "nodes=" + b.Nodes
		if len(b.Reasons) > 0 {
			s += fmt.Sprintf(" reasons=%v", b.Reasons)
		}
		if b.Schedule != nil {
			s += fmt.Sprintf(" schedule=%q duration=%s", *b.Schedule, b.Duration.Duration)
		}
		budgets = append(budgets, s)
	}
	tgp := "none"
	if np.Spec.Template.Spec.TerminationGracePeriod != nil {
		tgp = np.Spec.Template.Spec.TerminationGracePeriod.Duration.String()
	}
	// NillableDuration's nil *time.Duration is Never (karpenter v1.15.0 pkg/apis/v1/duration.go L33-39).
	after := "Never"
	if d.ConsolidateAfter.Duration != nil {
		after = d.ConsolidateAfter.Duration.String()
	}
	return fmt.Sprintf("render: consolidationPolicy=%s consolidateAfter=%s budgets=%v expireAfter=%s terminationGracePeriod=%s",
		d.ConsolidationPolicy, after, budgets, np.Spec.Template.Spec.ExpireAfter, tgp)
}

// nodePoolPod: a small pod Karpenter can only place on the NodePool (its karpenter.sh/nodepool
// label), tolerating the NodePool's taints; spread > "" puts each pod of the same spread on its
// own node (required anti-affinity on the hostname).
func nodePoolPod(h *Harness, nodePool, name, spread string) *corev1.Pod {
	np := h.NodePools[nodePool]
	var tolerations []corev1.Toleration
	for _, t := range np.Spec.Template.Spec.Taints {
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect})
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"conformance/spread": spread}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{karpv1.NodePoolLabelKey: nodePool},
			Tolerations:  tolerations,
			Containers: []corev1.Container{{
				Name: "unit", Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "128Mi")},
			}},
		},
	}
	if spread != "" {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"conformance/spread": spread}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
	}
	return p
}

// A Saturday noon and a Monday 09:00 UTC after the real date: the fake clock never runs behind
// the API server's own timestamps (creationTimestamp).
func nextWeekday(day time.Weekday, hour int) time.Time {
	t := time.Now().UTC().Truncate(time.Hour).Add(24 * time.Hour)
	t = time.Date(t.Year(), t.Month(), t.Day(), hour, 0, 0, 0, time.UTC)
	for t.Weekday() != day {
		t = t.Add(24 * time.Hour)
	}
	return t
}
