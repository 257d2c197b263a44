package karpenter

// Oracles of their own: what a pool may buy and launch, derived in Go from the rendered objects
// (KAI Queues, PriorityClasses, workload templates, NodePools, NodeOverlays), the stack file the
// render was made from and AWS's instance data, never from capacity.json or the project's Python
// (the code under test writes both).
//
// KAI's admission rules (kai-scheduler/KAI-Scheduler v0.16.8):
//   - a job is refused when, for its queue or any ancestor (the loop over ParentQueue,
//     pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go L19), the GPU limit is
//     set (not -1, L54) and limit < allocated + requested (L61);
//   - a non-preemptible job (preemptible ones pass, quota_check.go L29-33) is refused when, for
//     its queue or any ancestor (L35), the GPU quota is set (not -1, L66) and
//     quota < allocated non-preemptible + requested (L73); both checks run, limits first
//     (capacity_policy.go L33);
//   - limit and quota are the Queue's spec.resources.gpu.limit and .quota as written
//     (pkg/scheduler/plugins/proportion/proportion.go L344-347);
//   - a pod group is non-preemptible when its kai.scheduler/preemptibility label (owner, then pod)
//     says so, else when its priority class's value is >= 100 (pkg/common/podgroup/preemptible.go
//     L10-26; default_grouper.go L226-246); the class is the owner's or the pod's
//     priorityClassName label, else spec.priorityClassName, used only if the class exists
//     (default_grouper.go L191-203, L275-297), else the grouper's fallback: inference for a
//     Deployment (plugins/deployment/deployment_grouper.go L48), train for a Job or a bare pod
//     (default_grouper.go L66).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/samber/lo"
)

const (
	nodePoolsAnnotation  = "eks-gpu-platform.io/node-pools"  // a leaf Queue's pools (components/scheduler/manifests.py queue_manifest)
	poolSharesAnnotation = "eks-gpu-platform.io/pool-shares" // its explicit poolShares, pool=share,...
	unlimited            = -1.0                              // KAI's UnlimitedResourceQuantity (pkg/common/constants/constants.go L14)
	nonPreemptibleFrom   = 100                               // preemptible.go L10
)

// kaiQueue is one rendered Queue's GPU facts.
type kaiQueue struct {
	Name, Parent string
	Quota, Limit float64
	Pools        []string           // the annotation's pools; empty for a parent queue
	Shares       map[string]float64 // explicit poolShares, if any
}

// renderQueues reads the rendered Queue objects (scheduling.run.ai/v2).
func renderQueues(r *Render) (map[string]*kaiQueue, error) {
	out := map[string]*kaiQueue{}
	for _, d := range r.Kind("Queue") {
		var q struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				ParentQueue string `json:"parentQueue"`
				Resources   struct {
					GPU struct {
						Quota *float64 `json:"quota"`
						Limit *float64 `json:"limit"`
					} `json:"gpu"`
				} `json:"resources"`
			} `json:"spec"`
		}
		if err := fromUnstructuredLoose(d.Object, &q); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		if q.Spec.Resources.GPU.Quota == nil || q.Spec.Resources.GPU.Limit == nil {
			return nil, fmt.Errorf("%s: Queue %s has no spec.resources.gpu.quota/limit", d, q.Metadata.Name)
		}
		kq := &kaiQueue{Name: q.Metadata.Name, Parent: q.Spec.ParentQueue, Quota: *q.Spec.Resources.GPU.Quota, Limit: *q.Spec.Resources.GPU.Limit, Shares: map[string]float64{}}
		for _, p := range strings.Split(q.Metadata.Annotations[nodePoolsAnnotation], ",") {
			if p = strings.TrimSpace(p); p != "" {
				kq.Pools = append(kq.Pools, p)
			}
		}
		for _, item := range strings.Split(q.Metadata.Annotations[poolSharesAnnotation], ",") {
			pool, value, ok := strings.Cut(item, "=")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return nil, fmt.Errorf("%s: annotation %s: %q: %w", d, poolSharesAnnotation, item, err)
			}
			kq.Shares[strings.TrimSpace(pool)] = v
		}
		out[kq.Name] = kq
	}
	for _, q := range out {
		if q.Parent != "" && out[q.Parent] == nil {
			return nil, fmt.Errorf("Queue %s: parentQueue %s is not rendered", q.Name, q.Parent)
		}
	}
	return out, nil
}

func capOf(v float64) float64 {
	if v == unlimited {
		return math.Inf(1)
	}
	return v
}

func showCap(v float64) string {
	if math.IsInf(v, 1) {
		return "unlimited"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// poolPreemptible: whether the work the render routes to the pool is preemptible by KAI's rules:
// every workload template (examples/) whose required node affinity names the pool is resolved to
// its pod group's preemptibility; the pool is non-preemptible when all of them are (and there is
// one). A pool no template names: the NodePool's eks-gpu-platform.io/preemptible label.
func poolPreemptible(r *Render, h *Harness, workloads []Workload, pool string) (bool, string) {
	classes := map[string]int32{}
	for _, d := range r.Kind("PriorityClass") {
		v, _, _ := unstructuredInt(d.Object.Object, "value")
		classes[d.Object.GetName()] = int32(v)
	}
	var why []string
	seen := false
	for _, w := range workloads {
		if !lo.Contains(w.Pools, pool) {
			continue
		}
		seen = true
		pre, reason := kaiPreemptible(w, classes)
		why = append(why, fmt.Sprintf("%s %s: %s", w.Kind, w.Name, reason))
		if pre {
			return true, strings.Join(why, "; ")
		}
	}
	if seen {
		return false, strings.Join(why, "; ")
	}
	for _, np := range h.NodePools {
		if np.Spec.Template.Labels[poolLabel] == pool {
			return np.Spec.Template.Labels["eks-gpu-platform.io/preemptible"] != "false", "no template routes here: the NodePool's eks-gpu-platform.io/preemptible label"
		}
	}
	return true, "no template, no NodePool"
}

// kaiPreemptible resolves a workload template's pod group preemptibility as KAI's pod grouper does.
func kaiPreemptible(w Workload, classes map[string]int32) (bool, string) {
	owner := w.Doc.Object.GetLabels()
	pod := w.Template.Labels
	for _, labels := range []map[string]string{owner, pod} {
		switch labels["kai.scheduler/preemptibility"] {
		case "preemptible":
			return true, "label kai.scheduler/preemptibility=preemptible"
		case "non-preemptible":
			return false, "label kai.scheduler/preemptibility=non-preemptible"
		}
	}
	name := ""
	if v, ok := owner["priorityClassName"]; ok {
		name = v
	} else if v, ok := pod["priorityClassName"]; ok {
		name = v
	} else {
		name = w.Template.Spec.PriorityClassName
	}
	if _, ok := classes[name]; !ok {
		name = "train"
		if w.Kind == "Deployment" {
			name = "inference"
		}
	}
	v, ok := classes[name]
	if !ok {
		return true, fmt.Sprintf("class %s is not rendered (priority 0)", name)
	}
	return v < nonPreemptibleFrom, fmt.Sprintf("class %s (%d)", name, v)
}

// kaiCeiling is the most GPU units KAI can ever admit into one pool, from the rendered Queues:
// each leaf queue routed to it gives at most its gpu.limit (its poolShares entry if it has one;
// for non-preemptible work also its gpu.quota), and each ancestor cuts the sum of its subtree to
// its gpu.limit (for non-preemptible work also to its gpu.quota). Exact: whether no ancestor cut
// is shared with another pool and every queue routed here routes nowhere else, so the pool's
// budget is this ceiling (rounded up to whole nodes), not a share of it.
type kaiCeiling struct {
	Units  float64
	Sum    float64 // the queues' own caps, summed: KAI never admits more
	Exact  bool
	Reason []string // the derivation, for messages
}

func poolCeiling(queues map[string]*kaiQueue, pool string, preemptible bool, gpuPools map[string]bool) kaiCeiling {
	leafCap := func(q *kaiQueue, p string) float64 {
		c := capOf(q.Limit)
		if !preemptible {
			c = math.Min(c, capOf(q.Quota))
		}
		if s, ok := q.Shares[p]; ok {
			c = math.Min(c, s)
		}
		return c
	}
	children := map[string][]string{}
	var roots []string
	for _, name := range sortedKeys(queues) {
		if p := queues[name].Parent; p != "" {
			children[p] = append(children[p], name)
		} else {
			roots = append(roots, name)
		}
	}
	c := kaiCeiling{Exact: true}
	routed := func(q *kaiQueue) []string {
		return lo.Filter(q.Pools, func(p string, _ int) bool { return gpuPools[p] })
	}
	// anyCap: a subtree's caps summed over every pool (for whether an ancestor's cut binds).
	var subtreeAll func(name string) (float64, bool)
	subtreeAll = func(name string) (float64, bool) {
		q := queues[name]
		if len(children[name]) == 0 {
			r := routed(q)
			if len(r) == 0 {
				return 0, true
			}
			v := capOf(q.Limit)
			if !preemptible {
				v = math.Min(v, capOf(q.Quota))
			}
			return v, len(r) == 1 && r[0] == pool
		}
		sum, only := 0.0, true
		for _, ch := range children[name] {
			v, o := subtreeAll(ch)
			sum += v
			only = only && o
		}
		return sum, only
	}
	var walk func(name string) float64
	walk = func(name string) float64 {
		q := queues[name]
		if len(children[name]) == 0 {
			if !lo.Contains(q.Pools, pool) {
				return 0
			}
			v := leafCap(q, pool)
			c.Sum += v
			c.Reason = append(c.Reason, fmt.Sprintf("queue %s gpu.limit %s quota %s", q.Name, showCap(q.Limit), showCap(q.Quota)))
			if r := routed(q); len(r) != 1 {
				c.Exact = false
			}
			return v
		}
		sum := 0.0
		for _, ch := range children[name] {
			sum += walk(ch)
		}
		if sum == 0 {
			return 0
		}
		cut := capOf(q.Limit)
		key := "gpu.limit"
		if !preemptible && capOf(q.Quota) < cut {
			cut, key = capOf(q.Quota), "gpu.quota"
		}
		if cut < sum {
			c.Reason = append(c.Reason, fmt.Sprintf("ancestor %s %s %s", q.Name, key, showCap(cut)))
		}
		if all, only := subtreeAll(name); cut < all && !only {
			c.Exact = false // the cut is shared with another pool: the pool gets a share of it
		}
		return math.Min(sum, cut)
	}
	for _, root := range roots {
		c.Units += walk(root)
	}
	return c
}

// roundUpNodes: the smallest whole number of the pool's smallest nodes (in the units Karpenter
// charges them) that holds `units`: a NodePool limit between the KAI ceiling and this is the
// last node KAI can fill; above it, GPUs KAI never admits.
func roundUpNodes(units float64, smallest int64) int64 {
	if math.IsInf(units, 1) || smallest <= 0 {
		return math.MaxInt64
	}
	return int64(math.Ceil(units/float64(smallest)-1e-9)) * smallest
}

// queueCeiling: the most GPU units KAI admits to one queue at once: its gpu.limit (for
// non-preemptible work also its gpu.quota), cut by every ancestor's (max_allowed_check.go L19,
// quota_check.go L35).
func queueCeiling(queues map[string]*kaiQueue, name string, preemptible bool) float64 {
	c := math.Inf(1)
	for q := queues[name]; q != nil; q = queues[q.Parent] {
		c = math.Min(c, capOf(q.Limit))
		if !preemptible {
			c = math.Min(c, capOf(q.Quota))
		}
		if q.Parent == "" {
			break
		}
	}
	return c
}
