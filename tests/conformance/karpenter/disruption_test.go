package karpenter

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/utils/pdb"

	"eks-gpu-platform.local/conformance/internal/render"
)

const doNotDisrupt = karpv1.DoNotDisruptAnnotationKey

// ---- e. disruption ----

// scenarioDisruption: with the render's admission policies active in the real API server, the
// DaemonSet and mirror pods of tests/fixtures/system-pods (as their controllers create them) are
// created on an empty GPU node of the render's first GPU pool; Karpenter's NewCandidate
// (karpenter v1.15.0 pkg/controllers/disruption/types.go L150-219; statenode.go
// ValidatePodsDisruptable L328-339: DaemonSet and mirror pods with do-not-disrupt block) must
// accept the node for graceful disruption (emptiness, consolidation), and must refuse it once a
// pod annotated karpenter.sh/do-not-disrupt runs there.
func scenarioDisruption(r *Render, d *InstanceData) []error {
	if len(r.Capacity.Pools) == 0 {
		return []error{fmt.Errorf("render %s has no GPU pool", r.Stack)}
	}
	pool := r.Capacity.Pools[0]
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	fixtures, err := systemPodFixtures()
	if err != nil {
		return []error{err}
	}
	if err := h.applyAdmissionPolicies(); err != nil {
		return []error{err}
	}
	// The GPU Operator's operands run with runtimeClassName nvidia, the RuntimeClass the operator
	// creates (gpu-operator v26.7.0 assets/state-container-toolkit, handler nvidia).
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "nvidia"}, Handler: "nvidia"}
	if err := h.Client.Create(h.Ctx, rc); err != nil && !apierrors.IsAlreadyExists(err) {
		return []error{err}
	}
	var taints []corev1.Taint
	for _, np := range nodePoolsOf(r, pool.Name) {
		taints = append(taints, h.NodePools[np].Spec.Template.Spec.Taints...)
	}
	unit := UnitPod(PoolTemplate(pool.Name, taints), "default", "disruption-unit", rl("cpu", "100m", "memory", "128Mi", string(gpu), "1"))
	round, err := h.Provision(unit)
	if err != nil {
		return []error{err}
	}
	if len(round.Launched) != 1 {
		return []error{fmt.Errorf("pool %s: one pod launched %s: %s", pool.Name, describe(round.Launched), firstPodError(round))}
	}
	l := round.Launched[0]
	// The workload finished: the node is empty but for its system pods.
	if err := h.Client.Delete(h.Ctx, unit, client.GracePeriodSeconds(0)); err != nil {
		return []error{err}
	}
	h.Cluster.DeletePod(client.ObjectKeyFromObject(unit))
	var errs []error
	var annotated []string
	for _, p := range fixtures {
		p.Spec.NodeName = l.Node.Name
		p.Spec.Affinity = nil
		if err := ensureNamespace(h.Ctx, h.Client, p.Namespace); err != nil {
			return []error{err}
		}
		if err := h.Client.Create(h.Ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("the API server refused system pod %s/%s (render %s admission policies): %v", p.Namespace, p.Name, r.Stack, err))
			continue
		}
		if p.Annotations[doNotDisrupt] == "true" {
			annotated = append(annotated, p.Namespace+"/"+p.Name)
		}
		p.Status.Phase = corev1.PodRunning
		if err := h.Client.Status().Update(h.Ctx, p); err != nil {
			return []error{err}
		}
		if err := h.Cluster.UpdatePod(h.Ctx, p); err != nil {
			return []error{err}
		}
	}
	if err := h.initialize(l); err != nil {
		return []error{err}
	}
	if err := h.candidate(l.Node.Name); err != nil {
		errs = append(errs, fmt.Errorf("pool %s: empty node %s with its system pods is not a consolidation candidate: %v (pods annotated %s by the render's admission policies: %v)",
			pool.Name, l.Node.Name, err, doNotDisrupt, annotated))
	} else if len(annotated) > 0 {
		errs = append(errs, fmt.Errorf("pool %s: system pods annotated %s: %v", pool.Name, doNotDisrupt, annotated))
	}
	// A workload pod that asks not to be disrupted keeps the node.
	keep := UnitPod(PoolTemplate(pool.Name, taints), "default", "disruption-keep", rl("cpu", "100m", "memory", "128Mi"))
	keep.Annotations = map[string]string{doNotDisrupt: "true"}
	keep.Spec.NodeName = l.Node.Name
	if err := h.Client.Create(h.Ctx, keep); err != nil {
		return append(errs, err)
	}
	keep.Status.Phase = corev1.PodRunning
	if err := h.Client.Status().Update(h.Ctx, keep); err != nil {
		return append(errs, err)
	}
	if err := h.Cluster.UpdatePod(h.Ctx, keep); err != nil {
		return append(errs, err)
	}
	if err := h.candidate(l.Node.Name); err == nil {
		errs = append(errs, fmt.Errorf("pool %s: node %s running a %s pod is still a consolidation candidate", pool.Name, l.Node.Name, doNotDisrupt))
	} else if !strings.Contains(err.Error(), doNotDisrupt) {
		errs = append(errs, fmt.Errorf("pool %s: node %s with a %s pod refused for another reason: %v", pool.Name, l.Node.Name, doNotDisrupt, err))
	}
	return errs
}

// initialize marks the node Ready and initialized as the node lifecycle controller would once the
// kubelet reports (karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/initialization.go).
func (h *Harness) initialize(l Launched) error {
	node := &corev1.Node{}
	if err := h.Client.Get(h.Ctx, client.ObjectKeyFromObject(l.Node), node); err != nil {
		return err
	}
	node.Labels[karpv1.NodeInitializedLabelKey] = "true"
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}
	if err := applyWithStatus(h.Ctx, h.Client, node); err != nil {
		return err
	}
	claim := &karpv1.NodeClaim{}
	if err := h.Client.Get(h.Ctx, client.ObjectKeyFromObject(l.NodeClaim), claim); err != nil {
		return err
	}
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeInitialized)
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeConsolidatable)
	if err := applyWithStatus(h.Ctx, h.Client, claim); err != nil {
		return err
	}
	h.Cluster.UpdateNodeClaim(claim)
	if err := h.Cluster.UpdateNode(h.Ctx, node); err != nil {
		return err
	}
	// Past any nomination window of the provisioning round.
	h.AWS.Clock.Step(time.Hour)
	return nil
}

// candidate: disruption.NewCandidate for the node, graceful class (emptiness and consolidation).
func (h *Harness) candidate(nodeName string) error {
	pdbs, err := pdb.NewLimits(h.Ctx, h.Client)
	if err != nil {
		return err
	}
	nodePoolMap, itMap, err := disruption.BuildNodePoolMap(h.Ctx, h.Client, h.Cloud)
	if err != nil {
		return err
	}
	queue := disruption.NewQueue(h.Client, h.Recorder, h.Cluster, h.AWS.Clock, h.Prov)
	for _, sn := range h.Cluster.DeepCopyNodes() {
		if sn.Node != nil && sn.Node.Name == nodeName {
			_, err := disruption.NewCandidate(h.Ctx, h.Client, h.Recorder, h.AWS.Clock, sn, pdbs, nodePoolMap, itMap, queue, disruption.GracefulDisruptionClass)
			return err
		}
	}
	return fmt.Errorf("node %s not in Karpenter's cluster state", nodeName)
}

// applyAdmissionPolicies creates the render's admission policies and bindings in the API server
// and waits until the API server acts on them (a dry-run of an unrelated pod is not enough: the
// policy informer syncs asynchronously, so the first policy's effect is polled on a probe pod
// created with dryRun; when the policies act on no probe, the wait is bounded).
func (h *Harness) applyAdmissionPolicies() error {
	docs := h.Render.Kind("MutatingAdmissionPolicy", "ValidatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicyBinding")
	sort.SliceStable(docs, func(i, j int) bool { // policies before their bindings
		return !strings.HasSuffix(docs[i].Object.GetKind(), "Binding") && strings.HasSuffix(docs[j].Object.GetKind(), "Binding")
	})
	for _, d := range docs {
		if err := h.Client.Create(h.Ctx, d.Object.DeepCopy()); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	// The policy plugin's informer: give it time to load every policy and binding.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("admissionregistration.k8s.io/v1")
		list.SetKind("MutatingAdmissionPolicyBindingList")
		_ = h.Client.List(h.Ctx, list)
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// systemPodFixtures: the DaemonSet-owned and mirror pods of tests/fixtures/system-pods (what runs
// on every GPU node; Deployment pods run elsewhere and KAI's reservation pod only on fractional
// GPU nodes, where it carries do-not-disrupt by design).
func systemPodFixtures() ([]*corev1.Pod, error) {
	dir := filepath.Join(repoDir, "tests", "fixtures", "system-pods")
	docs, err := render.LoadDir(filepath.Dir(dir), filepath.Base(dir))
	if err != nil {
		return nil, fmt.Errorf("fixtures %s: %w (merge the admission branch's fixture commit)", dir, err)
	}
	var out []*corev1.Pod
	for _, d := range docs {
		if d.Object.GetKind() != "Pod" {
			continue
		}
		var p corev1.Pod
		if err := fromUnstructured(d.Object, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		owner := metav1.GetControllerOf(&p)
		mirror := p.Annotations[corev1.MirrorPodAnnotationKey] != ""
		if !mirror && (owner == nil || owner.Kind != "DaemonSet") {
			continue
		}
		p.ResourceVersion = ""
		p.Spec.Priority = nil
		out = append(out, &p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fixtures %s: no DaemonSet or mirror pod", dir)
	}
	return out, nil
}

// ---- f. AMI aliases ----

// scenarioAMIAliases: the pinned aliases resolve only through releases AWS published
// (amis_test.go scenarioAMIReleases; testdata/ami-releases.yaml holds the evidence).
func scenarioAMIAliases(r *Render, d *InstanceData) []error { return scenarioAMIReleases(r, d) }
