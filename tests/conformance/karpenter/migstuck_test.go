package karpenter

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The MIG startup remover's identity and what the render's policy says when it refuses
// (components/gpu_operator/mig_replace.py); the bound token's node-name extra (k8s.io/apiserver
// v0.36.3 pkg/authentication/serviceaccount/util.go L47), set here by impersonation.
const (
	migRemover        = "system:serviceaccount:gpu-operator:eks-gpu-platform-mig-ready"
	migRemoverPolicy  = "eks-gpu-platform-mig-replace"
	nodeNameExtra     = "authentication.kubernetes.io/node-name"
	migStartupTaint   = "nvidia.com/mig.config.state"
	refusedOtherNode  = "may delete only the NodeClaim of the node its pod runs on"
	refusedOtherPool  = "may delete only NodeClaims of the MIG pools"
	refusedNode       = "may update only the node its pod runs on"
	refusedNodePool   = "may update only nodes of the MIG pools"
	refusedLabel      = "may change no node label but nvidia.com/gpu.deploy.device-plugin"
	devicePluginLabel = "nvidia.com/gpu.deploy.device-plugin"
)

func init() {
	scenarios = append(scenarios, Scenario{
		Name: "mig-stuck-node-replaced",
		Claim: "a MIG node that keeps its startup taint is never initialized, and Karpenter nominates it for " +
			"pending MIG pods instead of launching (the stall of issue 30.2); the remover, through the " +
			"real API server, its RBAC and the render's admission policies, may put the device-plugin hold " +
			"back on its own MIG node but not release it before the layout (issue 30.1), and may delete " +
			"only its own node's NodeClaim in a MIG pool; once it has, Karpenter launches a replacement " +
			"for the pending pod",
		Stacks: func(r *Render) bool { return len(migNodePools(r)) > 0 },
		Run:    scenarioMIGStuck,
	})
}

// migNodePools: the render's NodePools with the MIG startup taint.
func migNodePools(r *Render) []string {
	var out []string
	for _, d := range r.Kind("NodePool") {
		np := &karpv1.NodePool{}
		if err := fromUnstructuredLoose(d.Object, np); err != nil {
			continue
		}
		for _, t := range np.Spec.Template.Spec.StartupTaints {
			if t.Key == migStartupTaint {
				out = append(out, np.Name)
			}
		}
	}
	return out
}

func scenarioMIGStuck(r *Render, d *InstanceData) []error {
	pool := migNodePools(r)[0]
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	np := h.NodePools[pool]
	mig := UnitPod(PoolTemplate(pool, np.Spec.Template.Spec.Taints), "default", "mig-a", rl("cpu", "100m", "memory", "128Mi", string(gpu), "1"))
	round, err := h.Provision(mig)
	if err != nil {
		return []error{err}
	}
	if len(round.Launched) != 1 || round.Launched[0].NodePool() != pool {
		return []error{fmt.Errorf("NodePool %s: one MIG pod launched %s: %s", pool, describe(round.Launched), firstPodError(round))}
	}
	l := round.Launched[0]
	var errs []error
	// The node registers with the startup taint (karpenter v1.15.0 pkg/apis/v1/nodeclaim.go
	// L32-35) and is never initialized while it is on (initialization.go L81-84).
	if !hasTaintKey(l.Node.Spec.Taints, migStartupTaint) {
		errs = append(errs, fmt.Errorf("node %s of NodePool %s has no %s startup taint: %v", l.Node.Name, pool, migStartupTaint, l.Node.Spec.Taints))
	}
	// The pod ended; another MIG pod pends. Karpenter counts the uninitialized node as room
	// (statenode.go L406-435 drops startup taints from its view) and launches nothing: the stall.
	if err := h.Client.Delete(h.Ctx, mig, client.GracePeriodSeconds(0)); err != nil {
		return append(errs, err)
	}
	h.Cluster.DeletePod(client.ObjectKeyFromObject(mig))
	pending := UnitPod(PoolTemplate(pool, np.Spec.Template.Spec.Taints), "default", "mig-b", rl("cpu", "100m", "memory", "128Mi", string(gpu), "1"))
	if err := createPendingPod(h.Ctx, h.Client, pending); err != nil {
		return append(errs, err)
	}
	results, err := h.Prov.Schedule(h.Ctx)
	if err != nil {
		return append(errs, err)
	}
	nominated := false
	for _, en := range results.ExistingNodes {
		nominated = nominated || (en.Name() == l.Node.Name && len(en.Pods) == 1)
	}
	if len(results.NewNodeClaims) != 0 || !nominated {
		errs = append(errs, fmt.Errorf("with the tainted MIG node %s in flight, Karpenter launched %d NodeClaims and nominated it: %v (want 0 and true)", l.Node.Name, len(results.NewNodeClaims), nominated))
	}

	// The remover's objects from the render: its ServiceAccount, ClusterRole and binding, and the
	// NodeClaim admission policy with its binding.
	if err := ensureNamespace(h.Ctx, h.Client, "gpu-operator"); err != nil {
		return append(errs, err)
	}
	for _, doc := range h.Render.Kind("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding") {
		name := doc.Object.GetName()
		if name != "eks-gpu-platform-mig-ready" && name != migRemoverPolicy {
			continue
		}
		if err := h.Client.Create(h.Ctx, doc.Object.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return append(errs, fmt.Errorf("%s: %w", doc, err))
		}
	}
	// The hold (issue 30.1), judged by the real API server's CEL: the GPU Operator strips the
	// label from the node (nodelabeling_controller.go L258-261); the remover may put "false" back
	// on its own node, and may not set "true" before the layout is applied.
	stripped := &corev1.Node{}
	if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: l.Node.Name}, stripped); err != nil {
		return append(errs, err)
	}
	before := stripped.DeepCopy()
	delete(stripped.Labels, devicePluginLabel)
	if err := h.Client.Patch(h.Ctx, stripped, client.MergeFrom(before)); err != nil {
		return append(errs, err)
	}
	release := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels/nvidia.com~1gpu.deploy.device-plugin","value":"true"}]`))
	if err := awaitRefusedPatch(h, l.Node.Name, stripped, release, refusedLabel); err != nil {
		errs = append(errs, err)
	}
	hold := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels/nvidia.com~1gpu.deploy.device-plugin","value":"false"}]`))
	if remover, err := removerClient(h, l.Node.Name); err != nil {
		return append(errs, err)
	} else if err := remover.Patch(h.Ctx, stripped.DeepCopy(), hold); err != nil {
		errs = append(errs, fmt.Errorf("the remover on %s could not put the hold back: %v", l.Node.Name, err))
	}
	// Another pool's node: the remover may not delete its NodeClaim, from either node.
	other := ""
	for _, p := range r.Capacity.Pools {
		if p.Name != pool {
			other = p.Name
			break
		}
	}
	var taints []corev1.Taint
	for _, name := range nodePoolsOf(r, other) {
		taints = append(taints, h.NodePools[name].Spec.Template.Spec.Taints...)
	}
	plain := UnitPod(PoolTemplate(other, taints), "default", "plain", rl("cpu", "100m", "memory", "128Mi", string(gpu), "1"))
	round, err = h.Provision(plain)
	if err != nil || len(round.Launched) != 1 {
		return append(errs, fmt.Errorf("pool %s: one pod launched %v: %v", other, round, err))
	}
	o := round.Launched[0]
	if err := awaitRefusedPatch(h, l.Node.Name, o.Node, hold, refusedNode); err != nil {
		errs = append(errs, err)
	}
	if err := awaitRefusedPatch(h, o.Node.Name, o.Node, hold, refusedNodePool); err != nil {
		errs = append(errs, err)
	}
	for _, c := range []struct {
		node, want string
		claim      *karpv1.NodeClaim
	}{
		{l.Node.Name, refusedOtherNode, o.NodeClaim},
		{o.Node.Name, refusedOtherPool, o.NodeClaim},
	} {
		if err := awaitRefused(h, c.node, c.claim, c.want); err != nil {
			errs = append(errs, err)
		}
	}
	// The NodeClaim lifecycle controller puts its termination finalizer on every NodeClaim before
	// launching it (karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/controller.go L148-151);
	// the harness launches without that controller, so it is added here.
	own := &karpv1.NodeClaim{}
	if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: l.NodeClaim.Name}, own); err != nil {
		return append(errs, err)
	}
	stored := own.DeepCopy()
	controllerutil.AddFinalizer(own, karpv1.TerminationFinalizer)
	if err := h.Client.Patch(h.Ctx, own, client.MergeFrom(stored)); err != nil {
		return append(errs, err)
	}
	// Its own node's NodeClaim, with the uid precondition the remover sends.
	remover, err := removerClient(h, l.Node.Name)
	if err != nil {
		return append(errs, err)
	}
	if err := remover.Delete(h.Ctx, l.NodeClaim.DeepCopy(), client.Preconditions{UID: &l.NodeClaim.UID}); err != nil {
		return append(errs, fmt.Errorf("the remover on %s could not delete its NodeClaim %s: %v", l.Node.Name, l.NodeClaim.Name, err))
	}
	// Karpenter's termination finalizer keeps it, deleting (statenode.go L536-547); the
	// provisioner schedules on active nodes only (provisioner.go L378-380, L417): a replacement.
	claim := &karpv1.NodeClaim{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: l.NodeClaim.Name}, claim); err != nil {
			return append(errs, fmt.Errorf("NodeClaim %s: %v (its termination finalizer should hold it)", l.NodeClaim.Name, err))
		}
		if !claim.DeletionTimestamp.IsZero() || time.Now().After(deadline) {
			break
		}
	}
	if claim.DeletionTimestamp.IsZero() {
		return append(errs, fmt.Errorf("NodeClaim %s is not deleting", claim.Name))
	}
	h.Cluster.UpdateNodeClaim(claim)
	results, err = h.Prov.Schedule(h.Ctx)
	if err != nil {
		return append(errs, err)
	}
	if len(results.NewNodeClaims) != 1 || results.NewNodeClaims[0].NodePoolName != pool {
		errs = append(errs, fmt.Errorf("after the remover deleted NodeClaim %s, Karpenter launched %d NodeClaims for the pending MIG pod (want 1 in NodePool %s); pod errors: %v", claim.Name, len(results.NewNodeClaims), pool, results.PodErrors))
	}
	for _, en := range results.ExistingNodes {
		if en.Name() == l.Node.Name && len(en.Pods) > 0 {
			errs = append(errs, fmt.Errorf("the deleting node %s is still nominated", l.Node.Name))
		}
	}
	return errs
}

func hasTaintKey(taints []corev1.Taint, key string) bool {
	for _, t := range taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// removerClient acts as the remover's pod on node: its ServiceAccount with the node-name extra of
// its bound token.
func removerClient(h *Harness, node string) (client.Client, error) {
	cfg := rest.CopyConfig(coreEnv.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: migRemover, Extra: map[string][]string{nodeNameExtra: {node}}}
	return client.New(cfg, client.Options{Scheme: h.Client.Scheme()})
}

// awaitRefused: a dry-run delete of claim by the remover on node is refused with want (the policy
// plugin loads the policy asynchronously: retried for 10 s; a dry run never deletes).
func awaitRefused(h *Harness, node string, claim *karpv1.NodeClaim, want string) error {
	remover, err := removerClient(h, node)
	if err != nil {
		return err
	}
	var last error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		last = remover.Delete(h.Ctx, claim.DeepCopy(), client.DryRunAll)
		if last != nil && strings.Contains(last.Error(), want) {
			return nil
		}
	}
	return fmt.Errorf("the remover on %s deleting NodeClaim %s (NodePool %s): %v, want a refusal saying %q", node, claim.Name, claim.Labels[karpv1.NodePoolLabelKey], last, want)
}

// awaitRefusedPatch: a dry-run patch of node by the remover on onNode is refused with want.
func awaitRefusedPatch(h *Harness, onNode string, node *corev1.Node, patch client.Patch, want string) error {
	remover, err := removerClient(h, onNode)
	if err != nil {
		return err
	}
	var last error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		last = remover.Patch(h.Ctx, node.DeepCopy(), patch, client.DryRunAll)
		if last != nil && strings.Contains(last.Error(), want) {
			return nil
		}
	}
	return fmt.Errorf("the remover on %s patching node %s: %v, want a refusal saying %q", onNode, node.Name, last, want)
}
