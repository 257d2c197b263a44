package apiserver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"eks-gpu-platform.local/conformance/internal/render"
)

// TenancyPolicyPrefix names the render's tenancy admission policies (README "Tenancy"): the
// queue binding, the pod rules, the 1.36 queue-label mutation and the toleration guardrail.
const TenancyPolicyPrefix = "platform-tenant-"

// PoolLabel is the node label the platform puts on every node of a pool (README "Node pools").
const PoolLabel = "eks-gpu-platform.io/pool"

// GPUResources is how the pod policy names the resources it reserves for KAI (README "Tenancy").
const GPUResources = "nvidia.com/gpu, nvidia.com/gpu.*, nvidia.com/mig-* or vpc.amazonaws.com/efa"

// isTenancy says whether d is a tenancy policy or a binding of one.
func isTenancy(d render.Doc) bool {
	switch applyOrder(d.Object.GetKind()) {
	case 4, 5:
		return strings.HasPrefix(d.Object.GetName(), TenancyPolicyPrefix)
	}
	return false
}

// tenantPod is one pod a shipped workload template makes: its pod template as a Pod in the
// template's namespace, named after the workload (and replica role).
type tenantPod struct {
	from string // the template document
	pod  *unstructured.Unstructured
}

// templatePods are the pods of every rendered example in a queue namespace: a Pod as written, the
// pod template of a Deployment, StatefulSet or Job, and each replica's of an MPIJob.
func templatePods(r *render.Render, queueNamespaces []string) []tenantPod {
	queue := map[string]bool{}
	for _, ns := range queueNamespaces {
		queue[ns] = true
	}
	var out []tenantPod
	add := func(d render.Doc, name string, template map[string]any) {
		pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
		if meta, ok := template["metadata"].(map[string]any); ok {
			pod.Object["metadata"] = deepCopy(meta)
		}
		pod.SetName(name)
		pod.SetNamespace(d.Object.GetNamespace())
		pod.Object["spec"] = deepCopy(template["spec"].(map[string]any))
		out = append(out, tenantPod{from: d.String(), pod: pod})
	}
	for _, d := range r.Examples {
		if !queue[d.Object.GetNamespace()] {
			continue
		}
		switch d.Object.GetKind() {
		case "Pod":
			out = append(out, tenantPod{from: d.String(), pod: d.Object.DeepCopy()})
		case "Deployment", "StatefulSet", "Job":
			t, _, _ := unstructured.NestedMap(d.Object.Object, "spec", "template")
			add(d, d.Object.GetName(), t)
		case "MPIJob":
			specs, _, _ := unstructured.NestedMap(d.Object.Object, "spec", "mpiReplicaSpecs")
			roles := make([]string, 0, len(specs))
			for role := range specs {
				roles = append(roles, role)
			}
			sort.Strings(roles)
			for _, role := range roles {
				t, _, _ := unstructured.NestedMap(specs[role].(map[string]any), "template")
				add(d, d.Object.GetName()+"-"+strings.ToLower(role), t)
			}
		}
	}
	return out
}

func deepCopy(m map[string]any) map[string]any {
	return runtime.DeepCopyJSON(m)
}

// podPool is the pool a template pod's required node affinity names (the templates pin their
// pool: README "Workload templates").
func podPool(pod *unstructured.Unstructured) string {
	terms, _, _ := unstructured.NestedSlice(pod.Object, "spec", "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	for _, t := range terms {
		exprs, _, _ := unstructured.NestedSlice(t.(map[string]any), "matchExpressions")
		for _, e := range exprs {
			e := e.(map[string]any)
			if e["key"] == PoolLabel && e["operator"] == "In" {
				if values, ok := e["values"].([]any); ok && len(values) == 1 {
					return values[0].(string)
				}
			}
		}
	}
	return ""
}

// preemptiblePools are the pools whose NodePools label their nodes preemptible (README "Node
// pools": <labelDomain>/preemptible).
func preemptiblePools(r *render.Render) map[string]bool {
	out := map[string]bool{}
	for _, d := range r.Kind("NodePool") {
		labels, _, _ := unstructured.NestedStringMap(d.Object.Object, "spec", "template", "metadata", "labels")
		if labels["eks-gpu-platform.io/preemptible"] == "true" {
			out[labels[PoolLabel]] = true
		}
	}
	return out
}

// tenancyCase is one refusal README "Tenancy" promises: a change to a well-formed template pod (or
// the workload wrapping it) and the exact message the API server must answer with.
type tenancyCase struct {
	name    string
	object  func(p tenantPod, other tenantPod) *unstructured.Unstructured
	policy  string
	message func(p tenantPod, other tenantPod) string
}

func queueOf(pod *unstructured.Unstructured) string { return pod.GetLabels()["kai.scheduler/queue"] }

func stripGPUs(pod *unstructured.Unstructured) {
	for _, field := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", field)
		for _, c := range containers {
			res, _ := c.(map[string]any)["resources"].(map[string]any)
			for _, part := range []string{"requests", "limits"} {
				if m, ok := res[part].(map[string]any); ok {
					for k := range m {
						if strings.HasPrefix(k, "nvidia.com/") || k == "vpc.amazonaws.com/efa" {
							delete(m, k)
						}
					}
				}
			}
		}
		if containers != nil {
			_ = unstructured.SetNestedSlice(pod.Object, containers, "spec", field)
		}
	}
}

func firstContainer(pod *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	return containers[0].(map[string]any)["name"].(string)
}

var tenancyCases = []tenancyCase{
	{"a pod naming another queue", func(p, o tenantPod) *unstructured.Unstructured {
		pod := p.pod.DeepCopy()
		labels := pod.GetLabels()
		labels["kai.scheduler/queue"] = queueOf(o.pod)
		pod.SetLabels(labels)
		return pod
	}, "platform-tenant-queue", func(p, o tenantPod) string {
		return fmt.Sprintf("queue binding: label kai.scheduler/queue=%s on Pod %s in namespace %s (queue %s) names another queue; allowed: %s",
			queueOf(o.pod), p.pod.GetName(), p.pod.GetNamespace(), queueOf(p.pod), queueOf(p.pod))
	}},
	{"a Deployment naming another queue", func(p, o tenantPod) *unstructured.Unstructured {
		pod := p.pod.DeepCopy()
		labels := pod.GetLabels()
		labels["kai.scheduler/queue"] = queueOf(o.pod)
		pod.SetLabels(labels)
		deploy, _ := workload("Deployment", pod)
		return deploy
	}, "platform-tenant-queue", func(p, o tenantPod) string {
		return fmt.Sprintf("queue binding: label kai.scheduler/queue=%s on Deployment conformance-deployment in namespace %s (queue %s) names another queue; allowed: %s",
			queueOf(o.pod), p.pod.GetNamespace(), queueOf(p.pod), queueOf(p.pod))
	}},
	{"a GPU pod under the default scheduler", func(p, _ tenantPod) *unstructured.Unstructured {
		pod := p.pod.DeepCopy()
		_ = unstructured.SetNestedField(pod.Object, "default-scheduler", "spec", "schedulerName")
		return pod
	}, "platform-tenant-pods", func(p, _ tenantPod) string {
		return fmt.Sprintf("GPUs only through the scheduler: pod %s requests %s with schedulerName default-scheduler; allowed: schedulerName kai-scheduler",
			p.pod.GetName(), GPUResources)
	}},
	{"a pod requesting no GPU with NVIDIA_VISIBLE_DEVICES=all", func(p, _ tenantPod) *unstructured.Unstructured {
		pod := p.pod.DeepCopy()
		stripGPUs(pod)
		containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
		c := containers[0].(map[string]any)
		env, _ := c["env"].([]any)
		c["env"] = append(env, map[string]any{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"})
		_ = unstructured.SetNestedSlice(pod.Object, containers, "spec", "containers")
		return pod
	}, "platform-tenant-pods", func(p, _ tenantPod) string {
		return fmt.Sprintf("GPU visibility: pod %s requests no GPU but sets NVIDIA_VISIBLE_DEVICES (container=value: %s=all); allowed: NVIDIA_VISIBLE_DEVICES unset, void or none, by value (valueFrom cannot be checked)",
			p.pod.GetName(), firstContainer(p.pod))
	}},
	{"a pod with spec.nodeName", func(p, _ tenantPod) *unstructured.Unstructured {
		pod := p.pod.DeepCopy()
		_ = unstructured.SetNestedField(pod.Object, "ip-10-40-0-10.us-west-2.compute.internal", "spec", "nodeName")
		return pod
	}, "platform-tenant-pods", func(p, _ tenantPod) string {
		return fmt.Sprintf("node name: pod %s sets spec.nodeName ip-10-40-0-10.us-west-2.compute.internal, which skips the scheduler and every taint but NoExecute; allowed: no spec.nodeName (select the queue's pools with nodeSelector or node affinity)",
			p.pod.GetName())
	}},
	{"a pod selecting another queue's pool", func(p, o tenantPod) *unstructured.Unstructured {
		pod := p.pod.DeepCopy()
		_ = unstructured.SetNestedStringMap(pod.Object, map[string]string{PoolLabel: podPool(o.pod)}, "spec", "nodeSelector")
		return pod
	}, "platform-tenant-pods", func(p, o tenantPod) string {
		return fmt.Sprintf("pools: pod %s selects %s=%s (nodeSelector), a pool of another queue; allowed: the queue's pools %s (label %s), or a pool no queue is routed to",
			p.pod.GetName(), PoolLabel, podPool(o.pod), podPool(p.pod), PoolLabel)
	}},
}

// nonPreemptibleCase is the class refusal, on a queue whose pool is preemptible: README "Tenancy"
// documents train and build-preemptible as what such a training queue may use.
var nonPreemptibleCase = tenancyCase{"a non-preemptible class in a preemptible-only queue", func(p, _ tenantPod) *unstructured.Unstructured {
	pod := p.pod.DeepCopy()
	_ = unstructured.SetNestedField(pod.Object, "inference", "spec", "priorityClassName")
	return pod
}, "platform-tenant-pods", func(p, _ tenantPod) string {
	return fmt.Sprintf("priority class: pod %s has priorityClassName inference, not allowed in queue %s; allowed: train, build-preemptible",
		p.pod.GetName(), queueOf(p.pod))
}}

// TenancyScenario judges README "Tenancy" with the render's tenancy policies on the real API
// server: a well-formed pod of every shipped template is admitted; each case of tenancyCases, on
// the first template pod whose queue has another queue's template pod to borrow from, is refused
// by its policy with its exact message, as is the non-preemptible class on the first template pod
// of a preemptible-only queue; no system pod is refused. Every create is dryRun=All.
func TenancyScenario(ctx context.Context, e *Env, r *render.Render, fx *Fixtures) []error {
	queueNamespaces := QueueNamespaces(r)
	if len(queueNamespaces) == 0 {
		return []error{fmt.Errorf("render %s: no leaf queue has a namespace", r.Stack)}
	}
	if err := e.prepareNamespaces(ctx, r, fx, queueNamespaces); err != nil {
		return []error{err}
	}
	var policies []render.Doc
	for _, d := range Ordered(r.Manifests) {
		if isTenancy(d) {
			if _, err := e.Apply(ctx, d.Object); err != nil {
				return []error{fmt.Errorf("%s: %s", d, errorText(err))}
			}
			policies = append(policies, d)
		}
	}
	pods := templatePods(r, queueNamespaces)
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	if len(pods) < 2 {
		fail("render %s: %d template pods in queue namespaces, want at least 2", r.Stack, len(pods))
	} else {
		// The policies keep their names from render to render: wait until this render's act (the
		// probe refused, and this render's last template pod, which names its own queue's class,
		// admitted), not the previous render's, still in the API server's informer for a moment.
		probe := tenancyCases[0].object(pods[0], pods[1])
		last := pods[len(pods)-1].pod
		if err := Poll(ctx, PolicyTimeout, func() error {
			if o := e.admit(ctx, probe); !o.byPolicy {
				return fmt.Errorf("the tenancy policies never refused %s/%s (%+v)", probe.GetNamespace(), probe.GetName(), o)
			}
			if o := e.admit(ctx, last); o.denied != "" {
				return fmt.Errorf("this render's policies not yet active: %s/%s denied: %s", last.GetNamespace(), last.GetName(), o.denied)
			}
			return nil
		}); err != nil {
			fail("render %s: %v", r.Stack, err)
		} else {
			problems = append(problems, e.tenancyChecks(ctx, r, fx, pods)...)
		}
	}
	for i := len(policies) - 1; i >= 0; i-- {
		if err := e.Delete(ctx, policies[i].Object); err != nil {
			fail("cleanup: %s: %s", policies[i], errorText(err))
		}
	}
	return problems
}

func (e *Env) tenancyChecks(ctx context.Context, r *render.Render, fx *Fixtures, pods []tenantPod) []error {
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	for _, p := range pods {
		if o := e.admit(ctx, p.pod); o.denied != "" {
			fail("template pod %s/%s of %s denied: %s", p.pod.GetNamespace(), p.pod.GetName(), p.from, o.denied)
		}
	}
	for _, d := range fx.System {
		if o := e.admit(ctx, d.Object.DeepCopy()); o.denied != "" {
			fail("system %s denied: %s", describe(d, d.Object), o.denied)
		}
	}
	// The case's pod: the first template pod with another queue's pod (with a pool) to borrow from.
	var subject, other *tenantPod
	for i := range pods {
		for j := range pods {
			if subject == nil && queueOf(pods[j].pod) != queueOf(pods[i].pod) && podPool(pods[j].pod) != "" && podPool(pods[i].pod) != "" {
				subject, other = &pods[i], &pods[j]
			}
		}
	}
	if subject == nil {
		return append(problems, fmt.Errorf("render %s: no two template pods of different queues with pools", r.Stack))
	}
	check := func(c tenancyCase, p, o tenantPod) {
		obj := c.object(p, o)
		want := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", c.policy, c.policy, c.message(p, o))
		got := e.admit(ctx, obj)
		if !strings.HasSuffix(got.denied, want) {
			fail("render %s: %s (%s/%s from %s): want denied %q, got %+v", r.Stack, c.name, obj.GetNamespace(), obj.GetName(), p.from, want, got)
		}
	}
	for _, c := range tenancyCases {
		check(c, *subject, *other)
	}
	preemptible := preemptiblePools(r)
	found := false
	for _, p := range pods {
		if !found && preemptible[podPool(p.pod)] {
			found = true
			check(nonPreemptibleCase, p, *other)
			problems = append(problems, e.deploymentTenancyChecks(ctx, r, p)...)
		}
	}
	if !found {
		fail("render %s: no template pod on a preemptible pool", r.Stack)
	}
	return problems
}
