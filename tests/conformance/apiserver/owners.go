package apiserver

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"eks-gpu-platform.local/conformance/internal/render"
)

// KAIVerdict is the annotation of tests/fixtures/kai-pods/owners.yaml that holds KAI's verdict for
// the pods of an owner's templates, derived line by line in that file (issue 30 points 6 and 7).
const KAIVerdict = "fixtures.eks-gpu-platform.io/kai-verdict"

// LoadOwners reads tests/fixtures/kai-pods/owners.yaml: Deployments and MPIJobs, each with its
// KAIVerdict.
func LoadOwners(repo string) ([]render.Doc, error) {
	docs, err := render.LoadFile(filepath.Join(repo, "tests", "fixtures", "kai-pods", "owners.yaml"))
	if err != nil {
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	for i := range docs {
		docs[i].File = "kai-pods/owners.yaml"
		if v := docs[i].Object.GetAnnotations()[KAIVerdict]; v != "preemptible" && v != "non-preemptible" {
			return nil, fmt.Errorf("fixtures: %s has %s %q", docs[i], KAIVerdict, v)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("fixtures: kai-pods/owners.yaml holds no owner")
	}
	return docs, nil
}

// templatePaths are the paths of an owner's pod templates: a Deployment's spec.template, an
// MPIJob's spec.mpiReplicaSpecs.<replica>.template (sorted).
func templatePaths(obj *unstructured.Unstructured) [][]string {
	if obj.GetKind() == "Deployment" {
		return [][]string{{"spec", "template"}}
	}
	specs, _, _ := unstructured.NestedMap(obj.Object, "spec", "mpiReplicaSpecs")
	var names []string
	for name := range specs {
		names = append(names, name)
	}
	sort.Strings(names)
	var out [][]string
	for _, n := range names {
		out = append(out, []string{"spec", "mpiReplicaSpecs", n, "template"})
	}
	return out
}

func join(path []string, more ...string) []string {
	return append(append([]string{}, path...), more...)
}

// placeOwner puts an owner fixture in the render's first queue namespace (unless the render has
// its own), its templates' queue label following.
func placeOwner(doc render.Doc, queueNamespaces []string) *unstructured.Unstructured {
	obj := doc.Object.DeepCopy()
	have := false
	for _, q := range queueNamespaces {
		have = have || q == obj.GetNamespace()
	}
	if !have && len(queueNamespaces) > 0 {
		obj.SetNamespace(queueNamespaces[0])
		for _, p := range templatePaths(obj) {
			if _, ok, _ := unstructured.NestedString(obj.Object, join(p, "metadata", "labels", "kai.scheduler/queue")...); ok {
				_ = unstructured.SetNestedField(obj.Object, queueNamespaces[0], join(p, "metadata", "labels", "kai.scheduler/queue")...)
			}
		}
	}
	return obj
}

// ownerPods are the pods the owner's controller makes (owners.yaml header): a Deployment's with
// pod-template-hash and a ReplicaSet owner, an MPIJob's with mpi-operator's labels, workers owned
// by the MPIJob and the launcher by its Job; made restricted.
func ownerPods(obj *unstructured.Unstructured) []*unstructured.Unstructured {
	var pods []*unstructured.Unstructured
	for _, p := range templatePaths(obj) {
		template, _, _ := unstructured.NestedMap(obj.Object, p...)
		pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
		if meta, ok := template["metadata"].(map[string]any); ok {
			pod.Object["metadata"] = meta
		}
		pod.Object["spec"] = template["spec"]
		labels := pod.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		role := strings.ToLower(p[len(p)-2])
		ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: obj.GetName() + "-5d8f7c6b9", UID: "0c1d2e3f-0000-4a5b-8c6d-7e8f9a0b1c2d"}
		if obj.GetKind() == "Deployment" {
			labels["pod-template-hash"] = "5d8f7c6b9"
			role = "pod"
		} else {
			labels["training.kubeflow.org/operator-name"] = "mpi-operator"
			labels["training.kubeflow.org/job-name"] = obj.GetName()
			labels["training.kubeflow.org/job-role"] = role
			ref = metav1.OwnerReference{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob", Name: obj.GetName(), UID: "0c1d2e3f-0001-4a5b-8c6d-7e8f9a0b1c2d"}
			if role == "launcher" {
				ref = metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: obj.GetName() + "-launcher", UID: "0c1d2e3f-0002-4a5b-8c6d-7e8f9a0b1c2d"}
			}
		}
		yes := true
		ref.Controller = &yes
		pod.SetLabels(labels)
		pod.SetOwnerReferences([]metav1.OwnerReference{ref})
		pod.SetNamespace(obj.GetNamespace())
		pod.SetName(obj.GetName() + "-" + role)
		restricted(pod)
		pods = append(pods, pod)
	}
	return pods
}

// ownerChecks: with the render's policies active, each owner of owners.yaml is annotated in every
// KAI template (Mutate) or denied without and admitted with the annotation (Deny) exactly when
// KAI's verdict is non-preemptible; a preemptible owner is never touched; the pods made from an
// owner are never acted on (the owner's policy judges them). Every create is dryRun=All.
func (e *Env) ownerChecks(ctx context.Context, mode Mode, owners []render.Doc, queueNamespaces []string) []error {
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	for _, d := range owners {
		obj := placeOwner(d, queueNamespaces)
		name := fmt.Sprintf("%s %s/%s (tests/fixtures/%s)", strings.ToLower(obj.GetKind()), obj.GetNamespace(), obj.GetName(), d.File)
		nonPreemptible := d.Object.GetAnnotations()[KAIVerdict] == "non-preemptible"
		got, err := e.dryRunOwner(ctx, obj)
		switch {
		case err != nil && !(mode == Deny && nonPreemptible):
			fail("%s (KAI: %s) denied: %s", name, d.Object.GetAnnotations()[KAIVerdict], errorText(err))
		case err == nil && mode == Deny && nonPreemptible:
			fail("non-preemptible %s without %s admitted", name, DoNotDisrupt)
		case err != nil:
			if !strings.Contains(errorText(err), "ValidatingAdmissionPolicy") {
				fail("non-preemptible %s denied, not by a policy: %s", name, errorText(err))
			}
			with := obj.DeepCopy()
			for _, p := range templatePaths(with) {
				_ = unstructured.SetNestedField(with.Object, "true", join(p, "metadata", "annotations", DoNotDisrupt)...)
			}
			if _, err := e.dryRunOwner(ctx, with); err != nil {
				fail("non-preemptible %s with %s=\"true\" denied: %s", name, DoNotDisrupt, errorText(err))
			}
		default:
			for _, p := range templatePaths(got) {
				v, _, _ := unstructured.NestedString(got.Object, join(p, "metadata", "annotations", DoNotDisrupt)...)
				want := ""
				if nonPreemptible && mode == Mutate {
					want = "true"
				}
				if v != want {
					fail("%s (KAI: %s): %s annotated %s=%q, want %q", name, d.Object.GetAnnotations()[KAIVerdict], strings.Join(p, "."), DoNotDisrupt, v, want)
				}
			}
		}
		for _, pod := range ownerPods(obj) {
			if o := e.admit(ctx, pod, podAnnotations...); o.denied != "" || o.added {
				fail("pod %s/%s of %s acted on by the pod policy (%+v): its owner's policy judges it", pod.GetNamespace(), pod.GetName(), name, o)
			}
		}
	}
	return problems
}

// crdTypesPending is the API server's answer while a MutatingAdmissionPolicy cannot yet type a
// custom resource whose CRD was just installed (its OpenAPI schema is published asynchronously).
const crdTypesPending = "There can be a delay between when CustomResourceDefinitions are created and when they are available"

// dryRunOwner is DryRunCreate, retried while the API server is still publishing a fresh CRD's
// schema to the mutating policies (envtest installs the MPIJob CRD seconds before the scenario; a
// cluster has it long before).
func (e *Env) dryRunOwner(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var got *unstructured.Unstructured
	var last error
	_ = Poll(ctx, PolicyTimeout, func() error {
		got, last = e.DryRunCreate(ctx, obj)
		if last != nil && strings.Contains(errorText(last), crdTypesPending) {
			return last
		}
		return nil
	})
	return got, last
}

// RatchetNamespace is where the UPDATE ratchet scenario keeps its Deployment: created bare, then
// labelled a queue namespace of the render (the policy binding now selects it), as a namespace
// that becomes a queue's after its workloads exist.
const RatchetNamespace = "conformance-ratchet"

// ratchetChecks (review 2026-11-27 L3): a non-preemptible Deployment stored before the policies
// judged it (its namespace became a queue namespace later) takes a finalizer patch, as the garbage
// collector makes, without a denial or a template change; a template change of the same object is
// judged (denied in Deny mode, annotated in Mutate mode).
func (e *Env) ratchetChecks(ctx context.Context, mode Mode, owners []render.Doc, queueNamespaces []string, domain string) (problems []error) {
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	var doc render.Doc
	for _, d := range owners {
		if d.Object.GetKind() == "Deployment" && d.Object.GetName() == "serve-labelled" {
			doc = d
		}
	}
	if doc.Object == nil {
		return []error{fmt.Errorf("fixtures: kai-pods/owners.yaml has no Deployment named serve-labelled")}
	}
	if err := e.EnsureNamespace(ctx, RatchetNamespace); err != nil {
		return []error{err}
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(RatchetNamespace)
	nsRes, err := e.Resource(ns)
	if err != nil {
		return []error{err}
	}
	label := func(value any) error {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, domain+"/queue", value)
		_, err := nsRes.Patch(ctx, RatchetNamespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
	if err := label("null"); err != nil {
		return []error{err}
	}
	obj := doc.Object.DeepCopy()
	obj.SetNamespace(RatchetNamespace)
	unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
	res, err := e.Resource(obj)
	if err != nil {
		return []error{err}
	}
	if _, err := e.Create(ctx, obj); err != nil {
		return []error{fmt.Errorf("ratchet: create %s/%s before its namespace is a queue's: %s", RatchetNamespace, obj.GetName(), errorText(err))}
	}
	defer func() {
		_, _ = res.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err := e.Delete(ctx, obj); err != nil {
			fail("ratchet: delete %s/%s: %v", RatchetNamespace, obj.GetName(), err)
		}
		if err := label("null"); err != nil {
			fail("ratchet: unlabel namespace %s: %v", RatchetNamespace, err)
		}
	}()
	if err := label(fmt.Sprintf("%q", queueNamespaces[0])); err != nil {
		return []error{err}
	}
	templatePatch := []byte(`{"spec":{"template":{"metadata":{"labels":{"version":"2"}}}}}`)
	// The binding sees the namespace's new label within the policy informer's resync: poll a
	// dry-run template change until it is judged.
	judged := func(dryRun bool) (string, error) {
		opts := metav1.PatchOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		got, err := res.Patch(ctx, obj.GetName(), types.MergePatchType, templatePatch, opts)
		if err != nil {
			return "", err
		}
		v, _, _ := unstructured.NestedString(got.Object, "spec", "template", "metadata", "annotations", DoNotDisrupt)
		return v, nil
	}
	err = Poll(ctx, PolicyTimeout, func() error {
		v, err := judged(true)
		switch {
		case mode == Deny && err != nil && strings.Contains(errorText(err), "ValidatingAdmissionPolicy"):
			return nil
		case mode == Mutate && err == nil && v == "true":
			return nil
		}
		return fmt.Errorf("a template change of %s/%s is not judged yet (annotation %q, error %v)", RatchetNamespace, obj.GetName(), v, err)
	})
	if err != nil {
		return []error{fmt.Errorf("ratchet: %w", err)}
	}
	got, err := res.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":["conformance.eks-gpu-platform.io/hold"]}}`), metav1.PatchOptions{})
	switch {
	case err != nil:
		fail("ratchet: a finalizer patch of the unannotated non-preemptible %s/%s denied: %s", RatchetNamespace, obj.GetName(), errorText(err))
	default:
		if v, found, _ := unstructured.NestedString(got.Object, "spec", "template", "metadata", "annotations", DoNotDisrupt); found {
			fail("ratchet: a finalizer patch of %s/%s changed its template: %s=%q", RatchetNamespace, obj.GetName(), DoNotDisrupt, v)
		}
	}
	v, err := judged(false)
	switch {
	case mode == Deny && (err == nil || !strings.Contains(errorText(err), "ValidatingAdmissionPolicy")):
		fail("ratchet: a template change of the unannotated non-preemptible %s/%s not denied by the policy (err %v)", RatchetNamespace, obj.GetName(), err)
	case mode == Mutate && (err != nil || v != "true"):
		fail("ratchet: a template change of %s/%s not annotated %s=\"true\" (got %q, err %v)", RatchetNamespace, obj.GetName(), DoNotDisrupt, v, err)
	}
	if apierrors.IsNotFound(err) {
		fail("ratchet: %s/%s vanished", RatchetNamespace, obj.GetName())
	}
	return problems
}

// queueLabelDomain is <domain> of the render's queue namespace label <domain>/queue.
func queueLabelDomain(r *render.Render) string {
	for _, d := range r.All() {
		if d.Object.GetKind() != "Namespace" {
			continue
		}
		for k := range d.Object.GetLabels() {
			if strings.HasSuffix(k, "/queue") {
				return strings.TrimSuffix(k, "/queue")
			}
		}
	}
	return ""
}
