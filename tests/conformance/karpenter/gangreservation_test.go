package karpenter

// The gang template on a pool with reserved capacity uses the reservation (issue 30, point 3).
//
// Karpenter v1.15.0 buys a reservation only for the NodeClaims whose requirements admit the
// reservation's instance type and zone: the AWS provider offers it for that type and zone only
// (karpenter-provider-aws v1.15.0 pkg/providers/instancetype/offering/reserved_capacity_resolver.go
// L71, L92-106) and launches reserved whenever an admitted type has a launchable reserved
// offering, one with room left (pkg/providers/instance/instance.go L810-828, getCapacityType:
// reserved, then spot, then on-demand). A gang template pins one zone and one type by required node affinity, so it
// uses the reservation only if it pins the reservation's own. The suite seeds each reservation as
// the user buys it for the pool (reservations_test.go seedCapacityReservations: the NodePool's
// first instance type EC2 offers in its zone, as docs/friction-points.md tells users to list it),
// independently of the render's gang choice (components/budget/gangs.py).

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/samber/lo"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// scenarioGangReservation: for each gang Job template (examples/, with pod affinity) whose pool
// has a NodePool with reserved capacity, the gang's pods (at most the reservation's instances)
// all launch as reserved NodeClaims of a seeded reservation, on its instance type and in its zone.
func scenarioGangReservation(r *Render, d *InstanceData) []error {
	workloads, err := r.Workloads()
	if err != nil {
		return []error{err}
	}
	reserved := reservedNodePools(r)
	var errs []error
	for _, w := range workloads {
		if w.Kind != "Job" || w.Template.Spec.Affinity == nil || w.Template.Spec.Affinity.PodAffinity == nil || len(w.Pools) != 1 {
			continue
		}
		pool := w.Pools[0]
		mine := lo.Filter(reserved, func(np string, _ int) bool { return poolOfRendered(r, np) == pool })
		if len(mine) == 0 {
			continue
		}
		h, herrs := newHarness(r, d)
		if herrs != nil {
			return append(errs, herrs...)
		}
		crs := h.seededReservations()
		if len(crs) == 0 {
			errs = append(errs, fmt.Errorf("gang %s: pool %s allows reserved capacity (NodePools %v), but the suite seeded no reservation", w.Name, pool, mine))
			continue
		}
		n := min(w.Replicas, reservedInstances)
		round, err := h.Provision(w.Pods(n)...)
		if err != nil {
			errs = append(errs, fmt.Errorf("gang %s: %w", w.Name, err))
			continue
		}
		want := lo.Map(crs, func(cr ec2types.CapacityReservation, _ int) string {
			return fmt.Sprintf("%s (%s in %s)", aws.ToString(cr.CapacityReservationId), aws.ToString(cr.InstanceType), aws.ToString(cr.AvailabilityZone))
		})
		if len(round.Launched) != n {
			errs = append(errs, fmt.Errorf("gang %s: %d pods with reservations %v available launched %s (%s)", w.Name, n, want, describe(round.Launched), firstPodError(round)))
			continue
		}
		for _, l := range round.Launched {
			_, ok := lo.Find(crs, func(cr ec2types.CapacityReservation) bool {
				return l.CapacityType() == karpv1.CapacityTypeReserved && l.InstanceType() == aws.ToString(cr.InstanceType) && l.Zone() == aws.ToString(cr.AvailabilityZone)
			})
			if !ok {
				errs = append(errs, fmt.Errorf("gang %s: NodeClaim %s is %s %s in %s, not a reservation's %v: the gang does not use the reservation", w.Name, l.NodeClaim.Name, l.CapacityType(), l.InstanceType(), l.Zone(), want))
			}
		}
	}
	return errs
}

// poolOfRendered: the eks-gpu-platform.io/pool label of the render's NodePool name.
func poolOfRendered(r *Render, name string) string {
	for _, d := range r.Kind("NodePool") {
		var np karpv1.NodePool
		if err := fromUnstructured(d.Object, &np); err == nil && np.Name == name {
			return np.Spec.Template.Labels[poolLabel]
		}
	}
	return ""
}
