package karpenter

// DRA GPU pools (docs/dra-pools.md): Karpenter 1.15 sizes a node for a pod's ResourceClaim on
// gpu.nvidia.com from the instance types' DRA templates (karpenter-provider-aws v1.15.1
// pkg/cloudprovider/dynamicresources.go L29-61, pkg/providers/nvidiadra/nvidiadra.go L67-100),
// with settings.awsFeatureGates.draNVIDIAGPU on (the harness turns on DRANVIDIAGPU and turns off
// IgnoreDRARequests when the rendered chart values set it).
//
// stacks.py renders the DRA stack (dev-dra) only where the pinned Karpenter has DRA (1.15 and up),
// so on an older module this scenario selects no render and withDRA finds no gate to set.

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	awsoptions "github.com/aws/karpenter-provider-aws/pkg/operator/options"
)

// draLabel marks a DRA pool's NodePools (components/nodepool/dra.py dra_labels).
const draLabel = "eks-gpu-platform.io/dra"

// The NVIDIA DRA driver's DeviceClass for whole GPUs, as its chart creates it
// (NVIDIA/k8s-dra-driver-gpu v0.4.0 deployments/helm/dra-driver-nvidia-gpu/templates/
// deviceclass-gpu.yaml): the render installs the chart, whose objects the suite does not see.
const (
	draDeviceClass = "gpu.nvidia.com"
	draSelector    = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
)

// withDRA turns on the AWS provider's DRANVIDIAGPU gate in the context's options, as the chart's
// settings.awsFeatureGates.draNVIDIAGPU does (AWS_FEATURE_GATES DRANVIDIAGPU=true;
// karpenter-provider-aws v1.15.1 pkg/operator/options/options.go L42, L120-122). The field is set by
// name: it exists from v1.15 on, and this file compiles against the suite's module either way.
func withDRA(ctx context.Context, on bool) context.Context {
	if !on {
		return ctx
	}
	gate := reflect.ValueOf(awsoptions.FromContext(ctx)).Elem().FieldByName("FeatureGates").FieldByName("DRANVIDIAGPU")
	if gate.IsValid() && gate.CanSet() && gate.Kind() == reflect.Bool {
		gate.SetBool(true)
	}
	return ctx
}

func init() {
	scenarios = append(scenarios, Scenario{
		Name: "dra-claim",
		Claim: "a pod claiming GPUs of a DRA pool through its template's ResourceClaim gets a NodeClaim of that pool " +
			"whose every option has as many GPUs, marked for the NVIDIA DRA driver; a pod requesting nvidia.com/gpu there, " +
			"or a claim larger than any of its types, gets none",
		Stacks: func(r *Render) bool { return len(draNodePools(r)) > 0 },
		Run:    scenarioDRAClaim,
	})
}

// draNodePools: the rendered NodePools labelled as a DRA pool's, by pool.
func draNodePools(r *Render) map[string][]string {
	out := map[string][]string{}
	for _, d := range r.Kind("NodePool") {
		labels, _, _ := unstructuredMap(d.Object.Object, "spec", "template", "metadata", "labels")
		if labels[draLabel] == "true" {
			pool, _ := labels[poolLabel].(string)
			out[pool] = append(out[pool], d.Object.GetName())
		}
	}
	return out
}

// claimTemplates: the examples' ResourceClaimTemplates, by namespace/name.
func claimTemplates(r *Render) (map[string]resourcev1.ResourceClaimTemplate, error) {
	out := map[string]resourcev1.ResourceClaimTemplate{}
	for _, d := range r.Examples {
		if d.Object.GetKind() != "ResourceClaimTemplate" {
			continue
		}
		var t resourcev1.ResourceClaimTemplate
		if err := fromUnstructuredLoose(d.Object, &t); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		out[t.Namespace+"/"+t.Name] = t
	}
	return out, nil
}

// claimedPods: the workload's pods, each with its own ResourceClaim made from the template it
// names (what kube-controller-manager's resourceclaim controller does; envtest runs none), the
// pod pointing at the claim by name. count > 0 replaces the claim's device count.
func (h *Harness) claimedPods(w Workload, templates map[string]resourcev1.ResourceClaimTemplate, count int64) ([]*corev1.Pod, int64, error) {
	var pods []*corev1.Pod
	var want int64
	for _, p := range w.Pods(0) {
		for i, ref := range p.Spec.ResourceClaims {
			if ref.ResourceClaimTemplateName == nil {
				continue
			}
			t, ok := templates[p.Namespace+"/"+*ref.ResourceClaimTemplateName]
			if !ok {
				return nil, 0, fmt.Errorf("%s: pod claim %s names ResourceClaimTemplate %s, not in the render", w.Doc, ref.Name, *ref.ResourceClaimTemplateName)
			}
			claim := &resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name + "-" + ref.Name, Namespace: p.Namespace},
				Spec:       *t.Spec.Spec.DeepCopy(),
			}
			for j := range claim.Spec.Devices.Requests {
				if e := claim.Spec.Devices.Requests[j].Exactly; e != nil {
					if count > 0 {
						e.Count = count
					}
					want = max(want, e.Count)
				}
			}
			if err := h.Client.Create(h.Ctx, claim); err != nil {
				return nil, 0, fmt.Errorf("%s: ResourceClaim %s: %w", w.Doc, claim.Name, err)
			}
			p.Spec.ResourceClaims[i] = corev1.PodResourceClaim{Name: ref.Name, ResourceClaimName: lo.ToPtr(claim.Name)}
		}
		pods = append(pods, p)
	}
	return pods, want, nil
}

func (h *Harness) createDeviceClass() error {
	dc := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: draDeviceClass},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: draSelector},
		}}},
	}
	return h.Client.Create(h.Ctx, dc)
}

func scenarioDRAClaim(r *Render, d *InstanceData) []error {
	workloads, err := r.Workloads()
	if err != nil {
		return []error{err}
	}
	templates, err := claimTemplates(r)
	if err != nil {
		return []error{err}
	}
	pools := draNodePools(r)
	var errs []error
	judged := 0
	for _, pool := range sortedKeys(pools) {
		for _, w := range workloads {
			if !lo.Contains(w.Pools, pool) || len(w.Template.Spec.ResourceClaims) == 0 {
				continue
			}
			judged++
			errs = append(errs, judgeDRAWorkload(r, d, pool, pools[pool], w, templates)...)
		}
	}
	if judged == 0 {
		errs = append(errs, fmt.Errorf("render %s: no workload template of a queue routed to DRA pools %v claims GPUs", r.Stack, sortedKeys(pools)))
	}
	return errs
}

func judgeDRAWorkload(r *Render, d *InstanceData, pool string, nodePools []string, w Workload, templates map[string]resourcev1.ResourceClaimTemplate) []error {
	var errs []error
	// 1. The template's claim: every pod gets a node of the pool, every option has the GPUs.
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	if err := h.createDeviceClass(); err != nil {
		return []error{fmt.Errorf("pool %s: DeviceClass: %w", pool, err)}
	}
	pods, want, err := h.claimedPods(w, templates, 0)
	if err != nil {
		return []error{err}
	}
	round, err := h.Provision(pods...)
	if err != nil {
		return []error{fmt.Errorf("pool %s, %s: %w", pool, w.Doc, err)}
	}
	for p, perr := range round.PodErrors {
		errs = append(errs, fmt.Errorf("pool %s, %s: pod %s claiming %d GPUs got no node: %v", pool, w.Doc, p.Name, want, perr))
	}
	if len(round.Launched) == 0 && len(round.PodErrors) == 0 {
		errs = append(errs, fmt.Errorf("pool %s, %s: nothing launched", pool, w.Doc))
	}
	for _, l := range round.Launched {
		if !lo.Contains(nodePools, l.NodePool()) {
			errs = append(errs, fmt.Errorf("pool %s, %s: launched on NodePool %s, not one of %v", pool, w.Doc, l.NodePool(), nodePools))
		}
		for _, t := range l.Options {
			if int64(gpuCount(d, t)) < want {
				errs = append(errs, fmt.Errorf("pool %s, %s: option %s has %d GPUs, the claim asks %d", pool, w.Doc, t, gpuCount(d, t), want))
			}
		}
		if drivers := l.NodeClaim.Annotations[karpv1.DRADriversAnnotationKey]; !lo.Contains(strings.Split(drivers, ","), draDeviceClass) {
			errs = append(errs, fmt.Errorf("pool %s, %s: NodeClaim %s has %s=%q, not the NVIDIA driver", pool, w.Doc, l.NodeClaim.Name, karpv1.DRADriversAnnotationKey, drivers))
		}
	}
	// The launched types are judged against the NodePool's requirements on AWS's data as the
	// other scenarios do (oracle_types_test.go).
	oracle, err := newTypeOracle(h, d)
	if err != nil {
		return append(errs, fmt.Errorf("dra-claim: %w", err))
	}
	for _, l := range round.Launched {
		errs = append(errs, oracle.check("dra-claim: "+w.Doc.String(), pool, l, l.Options)...)
	}
	// 2. A pod asking the device plugin for one nvidia.com/gpu on the pool: no node (its NodeOverlays
	// set 0: the pool's nodes run no device plugin, the pod would never run there).
	h3, herrs := newHarness(r, d)
	if herrs != nil {
		return append(errs, herrs...)
	}
	var taints []corev1.Taint
	for _, np := range nodePools {
		taints = append(taints, h3.NodePools[np].Spec.Template.Spec.Taints...)
	}
	unit := UnitPod(PoolTemplate(pool, taints), "default", "device-plugin-"+pool, rl("cpu", "100m", "memory", "128Mi", string(gpu), "1"))
	round, err = h3.Provision(unit)
	if err != nil {
		return append(errs, fmt.Errorf("pool %s, nvidia.com/gpu pod: %w", pool, err))
	}
	for _, l := range round.Launched {
		errs = append(errs, fmt.Errorf("pool %s: a pod requesting nvidia.com/gpu launched %s on %s, a DRA node that never advertises it",
			pool, l.InstanceType(), l.NodePool()))
	}
	// 3. A claim one GPU larger than the pool's largest type: no node.
	most := 0
	for _, np := range nodePools {
		for _, t := range oracle.admitted[np] {
			most = max(most, gpuCount(d, t))
		}
	}
	h2, herrs := newHarness(r, d)
	if herrs != nil {
		return append(errs, herrs...)
	}
	if err := h2.createDeviceClass(); err != nil {
		return append(errs, fmt.Errorf("pool %s: DeviceClass: %w", pool, err))
	}
	pods, _, err = h2.claimedPods(w, templates, int64(most+1))
	if err != nil {
		return append(errs, err)
	}
	round, err = h2.Provision(pods[:1]...)
	if err != nil {
		return append(errs, fmt.Errorf("pool %s, %s (%d GPUs): %w", pool, w.Doc, most+1, err))
	}
	for _, l := range round.Launched {
		errs = append(errs, fmt.Errorf("pool %s, %s: a claim of %d GPUs (the pool's largest type has %d) launched %s on %s",
			pool, w.Doc, most+1, most, l.InstanceType(), l.NodePool()))
	}
	return errs
}
