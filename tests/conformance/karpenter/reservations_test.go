package karpenter

// Capacity reservations and insufficient capacity on the provider's fake EC2.
//
// The fake EC2 (karpenter-provider-aws v1.15.0 pkg/fake/ec2api.go) answers
// DescribeCapacityReservations from DescribeCapacityReservationsOutput, filtered by the selector's
// ids and tags (L412-422; pkg/fake/utils.go L104-112, L157-191). Karpenter's capacity reservation
// provider counts a reservation's available instances down as it launches into it
// (pkg/providers/capacityreservation/types.go L134-152 MarkLaunched, called by
// pkg/cloudprovider/cloudprovider.go L179), so the flood exhausts it as EC2 would. CreateFleet skips an
// override whose (type, zone, capacity type) is in InsufficientCapacityPools and reports it as
// InsufficientInstanceCapacity (ec2api.go L159-172, L230-240); Karpenter then marks the offering
// unavailable (pkg/providers/instance/instance.go L639-673) and, as the NodeClaim lifecycle
// controller does on an insufficient-capacity error, the NodeClaim is deleted and its pods stay
// pending (karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/launch.go L96-102; Harness.Provision).
//
// What the fake still does not do: when a later override is fulfilled, it reports the FIRST
// override's type and zone as launched (ec2api.go L196-227), so a scenario here only ever
// insufficient-capacity's every override of a request (then nothing is fulfilled and the report
// is right). The overrides come in Karpenter's own order (the NodeClaim's types sorted by their
// cheapest compatible offering, karpenter pkg/cloudprovider/types.go L396-415, L502-514, via
// instance.go L373; one override per type and zone, L535-601), so "first override" is what the
// lowest-price allocation strategy EC2 applies to on-demand would pick among equally priced zones.

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// reservedInstances: the instances of each seeded reservation. Fewer than the reserved pools'
// NodePool limits hold (prod train-efa: 64 GPUs, 8 nodes), so the flood exhausts the reservation
// and shows the fallback.
const reservedInstances = 3

// reservationOwner: the account that owns the seeded reservations (AWS's documentation account).
const reservationOwner = "123456789012"

// seedCapacityReservations gives the fake EC2 one active, targeted reservation per
// capacityReservationSelectorTerms entry of the render's EC2NodeClasses, as the user would have
// bought it for the NodePools that use the classes selecting it: of the first such NodePool's first
// instance type EC2 offers in its zone (the zone requirement, else the render's first subnet
// zone), reservedInstances instances, tagged as the term selects (or with the term's id); classes
// with the same term share it. A term with neither tags nor id is an error.
// A NodePool that requires karpenter.k8s.aws/capacity-reservation-type capacity-block gets a
// Capacity Block (ReservationType capacity-block); none of the stacks does today.
func (h *Harness) seedCapacityReservations(data *InstanceData) error {
	region := data.Regions[h.Region]
	subnets, err := h.Render.Subnets()
	if err != nil {
		return err
	}
	// One reservation per distinct selector term: EC2NodeClasses that select the same tags (or
	// id) share the reservation, as they would in EC2 (efa-split's per-type classes do).
	type termUse struct {
		term  awsv1.CapacityReservationSelectorTerm
		users []string // "EC2NodeClass/NodePool"
		cr    *ec2types.CapacityReservation
	}
	var order []string
	uses := map[string]*termUse{}
	for _, d := range h.Render.Kind("EC2NodeClass") {
		var nc awsv1.EC2NodeClass
		if err := fromUnstructured(d.Object, &nc); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if len(nc.Spec.CapacityReservationSelectorTerms) == 0 {
			continue
		}
		np, err := h.renderedNodePoolOf(nc.Name)
		if err != nil {
			return err
		}
		reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
		zone := subnets[0].Zone
		if z := reqs.Get(corev1.LabelTopologyZone); z.Operator() == corev1.NodeSelectorOpIn {
			zone = z.Values()[0]
		}
		instanceType := ""
		for _, t := range reqs.Get(corev1.LabelInstanceTypeStable).Values() {
			if lo.ContainsBy(region.Offerings, func(o ec2types.InstanceTypeOffering) bool {
				return string(o.InstanceType) == t && aws.ToString(o.Location) == zone
			}) {
				instanceType = t
				break
			}
		}
		crType := ec2types.CapacityReservationTypeDefault
		if t := reqs.Get(awsv1.LabelCapacityReservationType); t.Has(string(awsv1.CapacityReservationTypeCapacityBlock)) && !t.Has(string(awsv1.CapacityReservationTypeDefault)) {
			crType = ec2types.CapacityReservationTypeCapacityBlock
		}
		for i, term := range nc.Spec.CapacityReservationSelectorTerms {
			if term.ID == "" && len(term.Tags) == 0 {
				return fmt.Errorf("EC2NodeClass %s: capacityReservationSelectorTerms[%d] has neither id nor tags", nc.Name, i)
			}
			key := term.ID + "|" + strings.Join(lo.Map(sortedKeys(term.Tags), func(k string, _ int) string { return k + "=" + term.Tags[k] }), ",")
			u := uses[key]
			if u == nil {
				u = &termUse{term: term}
				uses[key] = u
				order = append(order, key)
			}
			u.users = append(u.users, nc.Name+"/"+np.Name)
			if u.cr != nil || instanceType == "" {
				continue
			}
			id := term.ID
			if id == "" {
				// EC2's form, ^cr-[0-9a-z]+$ (the EC2NodeClass status schema checks it).
				id = fmt.Sprintf("cr-%s%d", strings.Map(func(r rune) rune {
					if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
						return r
					}
					return -1
				}, strings.ToLower(nc.Name)), i)
			}
			owner := lo.Ternary(term.OwnerID != "", term.OwnerID, reservationOwner)
			u.cr = &ec2types.CapacityReservation{
				CapacityReservationId: aws.String(id), OwnerId: aws.String(owner),
				InstanceType: aws.String(instanceType), AvailabilityZone: aws.String(zone), AvailabilityZoneId: aws.String(region.ZoneIDs[zone]),
				AvailableInstanceCount: aws.Int32(reservedInstances), TotalInstanceCount: aws.Int32(reservedInstances),
				State: ec2types.CapacityReservationStateActive, InstanceMatchCriteria: ec2types.InstanceMatchCriteriaTargeted,
				ReservationType: crType, Interruptible: aws.Bool(false), InstancePlatform: ec2types.CapacityReservationInstancePlatformLinuxUnix,
				Tags: ec2Tags(term.Tags),
			}
		}
	}
	var crs []ec2types.CapacityReservation
	for _, key := range order {
		u := uses[key]
		if u.cr == nil {
			return fmt.Errorf("capacity reservation selector %q (%v): no NodePool names an instance type EC2 offers in its zone to reserve", key, u.users)
		}
		crs = append(crs, *u.cr)
	}
	h.AWS.CapacityReservationAvailabilityCache.Flush()
	if len(crs) > 0 {
		h.AWS.EC2API.DescribeCapacityReservationsOutput.Set(&ec2.DescribeCapacityReservationsOutput{CapacityReservations: crs})
	}
	return nil
}

// renderedNodePoolOf: the render's NodePool whose nodeClassRef names the EC2NodeClass.
func (h *Harness) renderedNodePoolOf(nodeClass string) (*karpv1.NodePool, error) {
	for _, d := range h.Render.Kind("NodePool") {
		var np karpv1.NodePool
		if err := fromUnstructured(d.Object, &np); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		if np.Spec.Template.Spec.NodeClassRef != nil && np.Spec.Template.Spec.NodeClassRef.Name == nodeClass {
			return &np, nil
		}
	}
	return nil, fmt.Errorf("EC2NodeClass %s selects capacity reservations, but no NodePool uses it", nodeClass)
}

// reservedNodePools: the rendered NodePools whose capacity types include reserved.
func reservedNodePools(r *Render) []string {
	var out []string
	for _, d := range r.Kind("NodePool") {
		var np karpv1.NodePool
		if err := fromUnstructured(d.Object, &np); err != nil {
			continue
		}
		if lo.Contains(capacityTypes(&np), karpv1.CapacityTypeReserved) {
			out = append(out, np.Name)
		}
	}
	return out
}

// scenarioReservations: for each NodePool with reserved capacity (prod train-efa),
//  1. one unit pod gets a reserved NodeClaim (karpenter.sh/capacity-type reserved, the seeded
//     reservation's id, type and zone): the reservation is bought first;
//  2. a flood to the NodePool's limit buys exactly the reservation's instances as reserved, then
//     falls back to the other capacity types the NodePool allows (on-demand), up to the limit;
//  3. with the on-demand offerings of the NodePool's types in its zones out of capacity
//     (InsufficientInstanceCapacity), the flood buys the reservation, the on-demand launch fails
//     with an insufficient-capacity error naming the offering, Karpenter marks it unavailable and
//     the next round tries nothing: the pods stay pending.
func scenarioReservations(r *Render, d *InstanceData) []error {
	var errs []error
	for _, name := range reservedNodePools(r) {
		errs = append(errs, reservedFirst(r, d, name)...)
		errs = append(errs, reservationICE(r, d, name)...)
	}
	return errs
}

func (h *Harness) floodNodePool(name string) ([]Launched, *Round, error) {
	np := h.NodePools[name]
	pool := np.Spec.Template.Labels[poolLabel]
	template := PoolTemplate(pool, np.Spec.Template.Spec.Taints)
	limit := np.Spec.Limits[gpu]
	unit := rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")
	return h.Flood(func(i int) *corev1.Pod {
		return UnitPod(template, "default", fmt.Sprintf("reserved-%s-%d", name, i), unit)
	}, int(limit.Value())+2, 40)
}

func reservedFirst(r *Render, d *InstanceData, name string) []error {
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	crs := h.seededReservations()
	if len(crs) == 0 {
		return []error{fmt.Errorf("reservations: NodePool %s allows reserved capacity, but its EC2NodeClass selects no reservation the suite could seed", name)}
	}
	var errs []error
	np := h.NodePools[name]
	pool := np.Spec.Template.Labels[poolLabel]
	template := PoolTemplate(pool, np.Spec.Template.Spec.Taints)
	first, err := h.Provision(UnitPod(template, "default", "reserved-first-"+name, rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")))
	if err != nil {
		return []error{fmt.Errorf("reservations: NodePool %s: %w", name, err)}
	}
	if len(first.Launched) != 1 || first.Launched[0].CapacityType() != karpv1.CapacityTypeReserved {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s: one pod with reservation %s available launched %s, not one reserved node: the reservation is not bought first (%s)",
			name, aws.ToString(crs[0].CapacityReservationId), describe(first.Launched), firstPodError(first)))
	}
	launched, last, err := h.floodNodePool(name)
	if err != nil {
		return append(errs, fmt.Errorf("reservations: NodePool %s: flood: %w", name, err))
	}
	launched = append(first.Launched, launched...)
	byType := lo.GroupBy(launched, func(l Launched) string { return l.CapacityType() })
	reserved := byType[karpv1.CapacityTypeReserved]
	want := 0
	for _, cr := range crs {
		want += int(aws.ToInt32(cr.TotalInstanceCount))
	}
	if len(reserved) != want {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s: %d reserved NodeClaims, the seeded reservations hold %d instances (launched: %s)", name, len(reserved), want, describe(launched)))
	}
	for _, l := range reserved {
		id := l.NodeClaim.Labels[awsv1.LabelCapacityReservationID]
		cr, ok := lo.Find(crs, func(cr ec2types.CapacityReservation) bool { return aws.ToString(cr.CapacityReservationId) == id })
		if !ok {
			errs = append(errs, fmt.Errorf("reservations: NodePool %s: reserved NodeClaim %s carries %s=%q, no seeded reservation", name, l.NodeClaim.Name, awsv1.LabelCapacityReservationID, id))
			continue
		}
		if l.InstanceType() != aws.ToString(cr.InstanceType) || l.Zone() != aws.ToString(cr.AvailabilityZone) {
			errs = append(errs, fmt.Errorf("reservations: NodePool %s: reserved NodeClaim %s is %s in %s, reservation %s is %s in %s",
				name, l.NodeClaim.Name, l.InstanceType(), l.Zone(), id, aws.ToString(cr.InstanceType), aws.ToString(cr.AvailabilityZone)))
		}
	}
	allowed := capacityTypes(np)
	charged := int64(0)
	for ct, ls := range byType {
		if !lo.Contains(allowed, ct) {
			errs = append(errs, fmt.Errorf("reservations: NodePool %s: %d NodeClaims of capacity type %s, the NodePool allows %v", name, len(ls), ct, allowed))
		}
	}
	for _, l := range launched {
		q := l.NodeClaim.Status.Capacity[gpu]
		charged += q.Value()
	}
	limit := np.Spec.Limits[gpu]
	fallback := lo.Without(allowed, karpv1.CapacityTypeReserved)
	if len(fallback) > 0 && charged != limit.Value() {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s: once the reservation was exhausted the flood stopped at %d nvidia.com/gpu, not at the limit %d on %v (launched: %s; last round: %s)",
			name, charged, limit.Value(), fallback, describe(launched), firstPodError(last)))
	}
	return errs
}

// reservationPods: pods of one GPU unit each for the NodePool's pool, as many as the seeded
// reservations' instances hold (their total instance count times the units a node of the
// reservation's type advertises), named prefix-0, prefix-1, ...; and that instance count.
func reservationPods(r *Render, d *InstanceData, np *karpv1.NodePool, crs []ec2types.CapacityReservation, prefix string) ([]*corev1.Pod, int) {
	want, perNode := 0, int64(0)
	for _, cr := range crs {
		want += int(aws.ToInt32(cr.TotalInstanceCount))
		perNode = nodeUnits(r, d, np.Spec.Template.Labels[poolLabel], aws.ToString(cr.InstanceType))
	}
	template := PoolTemplate(np.Spec.Template.Labels[poolLabel], np.Spec.Template.Spec.Taints)
	var pods []*corev1.Pod
	for i := 0; i < want*int(perNode); i++ {
		pods = append(pods, UnitPod(template, "default", fmt.Sprintf("%s-%d", prefix, i), rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")))
	}
	return pods, want
}

func reservationICE(r *Render, d *InstanceData, name string) []error {
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	np := h.NodePools[name]
	if !lo.Contains(capacityTypes(np), karpv1.CapacityTypeOnDemand) {
		return nil
	}
	oracle, err := newTypeOracle(h, d)
	if err != nil {
		return []error{fmt.Errorf("reservations: %w", err)}
	}
	// Every on-demand offering the NodePool admits: its types in its zones.
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	var iced []fake.CapacityPool
	for _, it := range oracle.admitted[name] {
		for z, cts := range typeOfferings(d, d.Regions[h.Region], nil, it) {
			if reqs.Get(corev1.LabelTopologyZone).Has(z) && lo.Contains(cts, karpv1.CapacityTypeOnDemand) {
				iced = append(iced, fake.CapacityPool{CapacityType: karpv1.CapacityTypeOnDemand, InstanceType: it, Zone: z})
			}
		}
	}
	if len(iced) == 0 {
		return []error{fmt.Errorf("reservations: NodePool %s allows on-demand, but the oracle finds no on-demand offering of its types", name)}
	}
	offerings := strings.Join(lo.Map(iced, func(p fake.CapacityPool, _ int) string { return p.InstanceType + "/" + p.Zone + "/" + p.CapacityType }), ", ")
	// First the reservation is used up, with no capacity error seeded: the fake matches an
	// insufficient-capacity pool on the request's DefaultTargetCapacityType (ec2api.go L161-164),
	// which Karpenter sets to on-demand for a launch into a targeted reservation too
	// (pkg/providers/instance/types.go L205-214), where real EC2 would launch into the reservation.
	pods, want := reservationPods(r, d, np, h.seededReservations(), "reservation-"+name)
	var errs []error
	first, err := h.Provision(pods...)
	if err != nil {
		return []error{fmt.Errorf("reservations: NodePool %s: %w", name, err)}
	}
	if len(first.Launched) != want || lo.SomeBy(first.Launched, func(l Launched) bool { return l.CapacityType() != karpv1.CapacityTypeReserved }) {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s: %d pods of one GPU launched %s, want the reservations' %d instances, reserved", name, len(pods), describe(first.Launched), want))
	}
	h.AWS.EC2API.InsufficientCapacityPools.Set(iced)
	launched, last, err := h.floodNodePool(name)
	if err != nil {
		return append(errs, fmt.Errorf("reservations: NodePool %s, on-demand out of capacity (%s): flood: %w", name, offerings, err))
	}
	if len(launched) > 0 {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s, reservation exhausted and on-demand out of capacity (%s): launched %s, want nothing", name, offerings, describe(launched)))
	}
	if last == nil || len(last.Failed) == 0 {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s, on-demand out of capacity (%s): no launch failed with insufficient capacity once the reservation was exhausted (last round: %s)",
			name, offerings, firstPodError(last)))
	} else if !lo.SomeBy(last.Failed, func(f FailedLaunch) bool { return strings.Contains(f.Err.Error(), "InsufficientInstanceCapacity") }) {
		errs = append(errs, fmt.Errorf("reservations: NodePool %s: the on-demand launches failed, none with EC2's InsufficientInstanceCapacity: %v", name, last.Failed[0].Err))
	}
	again, err := h.Provision()
	if err != nil {
		return append(errs, fmt.Errorf("reservations: NodePool %s: the round after the insufficient capacity: %w", name, err))
	}
	if len(again.Launched) > 0 || len(again.Failed) > 0 {
		msg := ""
		if len(again.Failed) > 0 {
			msg = again.Failed[0].Err.Error()
		}
		errs = append(errs, fmt.Errorf("reservations: NodePool %s: after InsufficientInstanceCapacity on %s, the next round launched %s and failed %d launches (%s): the offering was not marked unavailable",
			name, offerings, describe(again.Launched), len(again.Failed), msg))
	}
	return errs
}
