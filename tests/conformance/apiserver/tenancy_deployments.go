package apiserver

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"eks-gpu-platform.local/conformance/internal/render"
)

// tenantQueuePolicy is the tenancy policy judging labels on every namespaced object.
const tenantQueuePolicy = "platform-tenant-queue"

// deploymentNonPreemptible is the queue policy's refusal of a Deployment KAI treats as
// non-preemptible in a preemptible-only queue (README "Tenancy", docs/kai-owners.md): with no
// label on the Deployment or its template and no class in the template, KAI's deployment grouper
// falls back to inference, value 100 (kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/plugins/
// deployment/deployment_grouper.go L38, L48; pkg/common/podgroup/preemptible.go L10-26).
func deploymentNonPreemptible(name, queue string) string {
	return fmt.Sprintf("priority class: KAI treats the pods of Deployment %s as non-preemptible "+
		"(label kai.scheduler/preemptibility or priorityClassName on the Deployment, else on its pod "+
		"template, else the template's priorityClassName, else KAI's inference default for a "+
		"Deployment), but queue %s runs preemptible work only; allowed: priorityClassName train, "+
		"build-preemptible (label or template), or label kai.scheduler/preemptibility=preemptible",
		name, queue)
}

// deploymentPod is the pod the ReplicaSet controller makes of deploy's template: the template's
// labels with pod-template-hash, owned by a ReplicaSet.
func deploymentPod(deploy *unstructured.Unstructured, name string) *unstructured.Unstructured {
	template, _, _ := unstructured.NestedMap(deploy.Object, "spec", "template")
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": template["metadata"], "spec": template["spec"]}}
	pod.SetName(name)
	pod.SetNamespace(deploy.GetNamespace())
	labels := pod.GetLabels()
	labels["pod-template-hash"] = "5d8f"
	pod.SetLabels(labels)
	pod.SetOwnerReferences(nil)
	_ = unstructured.SetNestedSlice(pod.Object, []any{map[string]any{"apiVersion": "apps/v1",
		"kind": "ReplicaSet", "name": deploy.GetName() + "-5d8f", "uid": "1", "controller": true}},
		"metadata", "ownerReferences")
	return pod
}

// deploymentTenancyChecks judges the preemptible-only rule on Deployments with the template pod p
// of a preemptible-only queue, its class and class labels removed (docs/kai-owners.md): KAI reads
// the Deployment's labels before the pod's (defaultgrouper/default_grouper.go L231-246,
// L275-284), so a Deployment labelled priorityClassName=train, or preemptible, is admitted and so
// is its pod, which names no class; a Deployment owned by a SeldonDeployment, a kind KAI may read
// (ClusterRole kai-podgrouper, deployments/kai-scheduler/templates/rbac/podgrouper.yaml), is not
// KAI's top owner (default grouper, train: admitted); the unlabelled Deployment is refused by the
// queue policy with its exact message, and its pod is left to it (admitted).
func (e *Env) deploymentTenancyChecks(ctx context.Context, r *render.Render, p tenantPod) []error {
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	base := p.pod.DeepCopy()
	unstructured.RemoveNestedField(base.Object, "spec", "priorityClassName")
	labels := base.GetLabels()
	delete(labels, "priorityClassName")
	delete(labels, "kai.scheduler/preemptibility")
	base.SetLabels(labels)
	bare, _ := workload("Deployment", base)
	name := bare.GetName()
	want := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s",
		tenantQueuePolicy, tenantQueuePolicy, deploymentNonPreemptible(name, queueOf(base)))
	if got := e.admit(ctx, bare); !strings.HasSuffix(got.denied, want) {
		fail("render %s: an unlabelled Deployment %s/%s (from %s): want denied %q, got %+v",
			r.Stack, bare.GetNamespace(), name, p.from, want, got)
	}
	if got := e.admit(ctx, deploymentPod(bare, p.pod.GetName())); got.denied != "" {
		fail("render %s: the pod of the unlabelled Deployment %s/%s, left to the Deployment, denied: %s",
			r.Stack, bare.GetNamespace(), name, got.denied)
	}
	admitted := func(what string, deploy *unstructured.Unstructured) {
		if got := e.admit(ctx, deploy); got.denied != "" {
			fail("render %s: %s %s/%s denied: %s", r.Stack, what, deploy.GetNamespace(), name, got.denied)
		}
		if got := e.admit(ctx, deploymentPod(deploy, p.pod.GetName())); got.denied != "" {
			fail("render %s: the pod of %s %s/%s denied: %s", r.Stack, what, deploy.GetNamespace(), name, got.denied)
		}
	}
	for _, label := range [][2]string{{"priorityClassName", "train"}, {"kai.scheduler/preemptibility", "preemptible"}} {
		deploy := bare.DeepCopy()
		labels := deploy.GetLabels()
		labels[label[0]] = label[1]
		deploy.SetLabels(labels)
		admitted(fmt.Sprintf("a Deployment labelled %s=%s (on the Deployment only)", label[0], label[1]), deploy)
	}
	seldon := bare.DeepCopy()
	_ = unstructured.SetNestedSlice(seldon.Object, []any{map[string]any{
		"apiVersion": "machinelearning.seldon.io/v1", "kind": "SeldonDeployment", "name": "model",
		"uid": "2", "controller": true}}, "metadata", "ownerReferences")
	admitted("a SeldonDeployment's unlabelled Deployment", seldon)
	return problems
}
