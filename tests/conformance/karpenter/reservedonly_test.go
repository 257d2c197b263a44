package karpenter

// A NodePool whose only capacity type is reserved keeps its pods pending while its reservation is
// full, instead of handing them to a lower-weight NodePool they could also run on
// (docs/node-pools.md, "Capacity types").
//
// Karpenter v1.15.0 offers a full reservation: available, with no room left (karpenter-provider-aws
// v1.15.0 pkg/providers/instancetype/offering/reserved_capacity_resolver.go L92-106). The
// provisioner schedules in strict reserved mode (kubernetes-sigs/karpenter v1.15.0
// pkg/controllers/provisioning/provisioner.go L406-407); a pod whose only compatible offering in a
// NodePool is a full reservation gets a ReservedOfferingError there
// (pkg/controllers/provisioning/scheduling/nodeclaim.go L373-396), and that error ends the search
// before the lower-weight NodePools (scheduling/scheduler.go L762-780). Under v1.14.1 a full
// reservation was unavailable (resolver L98) and the pods fell through.
//
// The scenario changes the render the way a user might split "the reservation, else on-demand"
// into two pools: each NodePool with reserved capacity becomes reserved-only at weight 100, and a
// copy of it (same template, labels, limits and EC2NodeClass) on-demand-only at weight 10. The
// platform's own pools list the fallback in the same NodePool (the "reservations" scenario).

import (
	"fmt"
	"strings"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// fullReservationError: what the scheduler reports for a pod whose only compatible offering is a
// full reservation, in strict mode (nodeclaim.go L393).
const fullReservationError = "all compatible reserved offerings are full and no on-demand or spot fallback is available"

func scenarioReservedOnly(r *Render, d *InstanceData) []error {
	var errs []error
	for _, name := range reservedNodePools(r) {
		errs = append(errs, reservedOnly(r, d, name)...)
	}
	return errs
}

// withCapacityTypes sets the NodePool's karpenter.sh/capacity-type requirement to the types.
func withCapacityTypes(np *karpv1.NodePool, capacityTypes ...string) {
	for i, req := range np.Spec.Template.Spec.Requirements {
		if req.Key == karpv1.CapacityTypeLabelKey {
			np.Spec.Template.Spec.Requirements[i].Operator = corev1.NodeSelectorOpIn
			np.Spec.Template.Spec.Requirements[i].Values = capacityTypes
			return
		}
	}
	np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
		Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: capacityTypes,
	})
}

func reservedOnly(r *Render, d *InstanceData, name string) []error {
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	crs := h.seededReservations()
	if len(crs) == 0 {
		return []error{fmt.Errorf("reserved-only: NodePool %s allows reserved capacity, but its EC2NodeClass selects no reservation the suite could seed", name)}
	}
	reservedPool := &karpv1.NodePool{}
	if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: name}, reservedPool); err != nil {
		return []error{fmt.Errorf("reserved-only: NodePool %s: %w", name, err)}
	}
	fallback := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name + "-on-demand"}, Spec: *reservedPool.Spec.DeepCopy()}
	withCapacityTypes(fallback, karpv1.CapacityTypeOnDemand)
	fallback.Spec.Weight = lo.ToPtr(int32(10))
	withCapacityTypes(reservedPool, karpv1.CapacityTypeReserved)
	reservedPool.Spec.Weight = lo.ToPtr(int32(100))
	if err := h.Client.Update(h.Ctx, reservedPool); err != nil {
		return []error{fmt.Errorf("reserved-only: NodePool %s: %w", name, err)}
	}
	if err := h.Client.Create(h.Ctx, fallback); err != nil {
		return []error{fmt.Errorf("reserved-only: NodePool %s: %w", fallback.Name, err)}
	}
	h.NodePools[name], h.NodePools[fallback.Name] = reservedPool, fallback
	if err := h.Reconcile(); err != nil {
		return []error{fmt.Errorf("reserved-only: %w", err)}
	}

	// 1. The reservations' instances, one pod per unit of each: all reserved, in the reserved pool.
	pods, want := reservationPods(r, d, reservedPool, crs, "reserved-only-"+name)
	var errs []error
	first, err := h.Provision(pods...)
	if err != nil {
		return []error{fmt.Errorf("reserved-only: NodePool %s: %w", name, err)}
	}
	if len(first.Launched) != want || lo.SomeBy(first.Launched, func(l Launched) bool {
		return l.CapacityType() != karpv1.CapacityTypeReserved || l.NodePool() != name
	}) {
		return append(errs, fmt.Errorf("reserved-only: NodePool %s (reserved only, weight 100): %d pods of one GPU launched %s, want the reservations' %d instances, reserved, in %s (%s)",
			name, len(pods), describe(first.Launched), want, name, firstPodError(first)))
	}

	// 2. One more pod: the reservation is full, and nothing launches, in either pool.
	template := PoolTemplate(reservedPool.Spec.Template.Labels[poolLabel], reservedPool.Spec.Template.Spec.Taints)
	extra := UnitPod(template, "default", "reserved-only-"+name+"-extra", rl("cpu", "100m", "memory", "128Mi", string(gpu), "1"))
	full, err := h.Provision(extra)
	if err != nil {
		return append(errs, fmt.Errorf("reserved-only: NodePool %s, reservation full: %w", name, err))
	}
	if len(full.Launched) > 0 {
		where := "in the reserved-only NodePool itself"
		if lo.SomeBy(full.Launched, func(l Launched) bool { return l.NodePool() == fallback.Name }) {
			where = "it fell through to the lower-weight NodePool " + fallback.Name
		}
		errs = append(errs, fmt.Errorf("reserved-only: NodePool %s (reserved only, weight 100), reservation full: the next pod launched %s, %s",
			name, describe(full.Launched), where))
	} else if msg := firstPodError(full); !strings.Contains(msg, fullReservationError) {
		errs = append(errs, fmt.Errorf("reserved-only: NodePool %s, reservation full: the pod is pending, but not for the full reservation: %s", name, msg))
	}

	// 3. Control: with the reserved-only NodePool gone, the same pending pod launches on-demand in
	// the copy, so the copy could take it and the full reservation is what held it.
	if err := h.Client.Delete(h.Ctx, reservedPool); err != nil {
		return append(errs, fmt.Errorf("reserved-only: deleting NodePool %s: %w", name, err))
	}
	delete(h.NodePools, name)
	after, err := h.Provision()
	if err != nil {
		return append(errs, fmt.Errorf("reserved-only: NodePool %s alone: %w", fallback.Name, err))
	}
	if len(after.Launched) != 1 || after.Launched[0].NodePool() != fallback.Name || after.Launched[0].CapacityType() != karpv1.CapacityTypeOnDemand {
		errs = append(errs, fmt.Errorf("reserved-only: control: with NodePool %s deleted, the pending pod launched %s, want one on-demand NodeClaim of %s (%s)",
			name, describe(after.Launched), fallback.Name, firstPodError(after)))
	}
	return errs
}
