package karpenter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 29, point 8, "Done when": --delete-leftovers on a cluster holding a Queue, a NodePool and a
// namespace carrying the validation's managed-by label but no run id deletes none of them, on the
// real API server with the dev render applied; an older run's namespace (both labels, its own
// name) is still deleted. The labels are written here (validateSelector), not imported.
func TestValidateDeleteLeftoversSparesWhatNoRunCreated(t *testing.T) {
	d := deploy(t, "dev")
	ctx := d.H.Ctx
	label := func(apiVersion, kind, name, patch string) {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(apiVersion)
		obj.SetKind(kind)
		obj.SetName(name)
		if err := d.H.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-label")); err != nil {
			t.Fatalf("label %s %s: %v", kind, name, err)
		}
	}
	managed := `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"eks-gpu-platform-validate"}}}`
	unlabel := `{"metadata":{"labels":{"app.kubernetes.io/managed-by":null}}}`
	label("karpenter.sh/v1", "NodePool", "gpu-spot", managed)
	label("scheduling.run.ai/v2", "Queue", "research-serving", managed)
	label("v1", "Namespace", "research-batch", managed)
	old := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "validate-oldrun1", Labels: map[string]string{
		"app.kubernetes.io/managed-by": "eks-gpu-platform-validate", "eks-gpu-platform.validate/run": "oldrun1",
	}}}
	if err := d.H.Client.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	run := d.validate(t, "vconf-leftovers", "--phases", "deployment", "--checks", "crds-served", "--delete-leftovers")
	if run.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s\n%s", run.Code, run.Output, run.MD)
	}
	expectCase(t, run, "preflight", "leftovers", "pass", "", "Namespace validate-oldrun1 (run oldrun1)")
	expectLines(t, run, "| leftovers | pass | deleted 1 objects of older runs |")
	for _, ref := range []struct{ apiVersion, kind, name string }{
		{"karpenter.sh/v1", "NodePool", "gpu-spot"},
		{"scheduling.run.ai/v2", "Queue", "research-serving"},
		{"v1", "Namespace", "research-batch"},
	} {
		live := &unstructured.Unstructured{}
		live.SetAPIVersion(ref.apiVersion)
		live.SetKind(ref.kind)
		if err := d.H.Client.Get(ctx, types.NamespacedName{Name: ref.name}, live); err != nil {
			t.Errorf("%s %s: %v (deleted by --delete-leftovers?)", ref.kind, ref.name, err)
		} else if live.GetDeletionTimestamp() != nil {
			t.Errorf("%s %s is being deleted by --delete-leftovers", ref.kind, ref.name)
		}
	}
	gone := &corev1.Namespace{}
	err := d.H.Client.Get(ctx, types.NamespacedName{Name: "validate-oldrun1"}, gone)
	if err == nil && gone.DeletionTimestamp == nil {
		t.Errorf("namespace validate-oldrun1 of an older run was not deleted")
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	label("karpenter.sh/v1", "NodePool", "gpu-spot", unlabel)
	label("scheduling.run.ai/v2", "Queue", "research-serving", unlabel)
	label("v1", "Namespace", "research-batch", unlabel)
	expectNoLeftovers(t)
}
