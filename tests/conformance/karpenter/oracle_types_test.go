package karpenter

// The instance types a pool may launch, derived from its NodePool's requirements on AWS's
// instance data and from the stack file's pool entry (see oracle_test.go for the principle).

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"eks-gpu-platform.local/conformance/internal/render"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// ---- the instance types a NodePool admits, from its requirements and AWS's data ----

// typeLabels: the well-known labels Karpenter's AWS provider puts on an instance type, written
// from AWS's DescribeInstanceTypes fields (karpenter-provider-aws v1.15.0
// pkg/providers/instancetype/types.go L348-349 instance-type and arch, L405-416 category,
// generation, family, size, L430-436 the GPU labels with lowerKabobCase, L753-755).
func typeLabels(info ec2types.InstanceTypeInfo) map[string]string {
	name := string(info.InstanceType)
	family, size, _ := strings.Cut(name, ".")
	labels := map[string]string{
		corev1.LabelInstanceTypeStable:          name,
		corev1.LabelOSStable:                    "linux",
		"karpenter.k8s.aws/instance-family":     family,
		"karpenter.k8s.aws/instance-size":       size,
		"karpenter.k8s.aws/instance-cpu":        fmt.Sprint(aws.ToInt32(info.VCpuInfo.DefaultVCpus)),
		"karpenter.k8s.aws/instance-hypervisor": string(info.Hypervisor),
	}
	if info.MemoryInfo != nil {
		labels["karpenter.k8s.aws/instance-memory"] = fmt.Sprint(aws.ToInt64(info.MemoryInfo.SizeInMiB))
	}
	if info.ProcessorInfo != nil && len(info.ProcessorInfo.SupportedArchitectures) > 0 {
		switch info.ProcessorInfo.SupportedArchitectures[0] {
		case ec2types.ArchitectureTypeArm64:
			labels[corev1.LabelArchStable] = karpv1.ArchitectureArm64
		default:
			labels[corev1.LabelArchStable] = karpv1.ArchitectureAmd64
		}
	}
	// instance-category / -generation: the family's letters and the number after them
	// (types.go L405-411: ^([a-z]+)(\-[0-9]+tb)?([0-9]+).*).
	i := 0
	for i < len(family) && family[i] >= 'a' && family[i] <= 'z' {
		i++
	}
	letters := family[:i]
	j := i
	for j < len(family) && family[j] >= '0' && family[j] <= '9' {
		j++
	}
	if i > 0 && j > i {
		labels["karpenter.k8s.aws/instance-category"] = letters
		labels["karpenter.k8s.aws/instance-generation"] = family[i:j]
	}
	if info.GpuInfo != nil && len(info.GpuInfo.Gpus) == 1 {
		g := info.GpuInfo.Gpus[0]
		kabob := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "-")) }
		labels["karpenter.k8s.aws/instance-gpu-name"] = kabob(aws.ToString(g.Name))
		labels["karpenter.k8s.aws/instance-gpu-manufacturer"] = kabob(aws.ToString(g.Manufacturer))
		labels["karpenter.k8s.aws/instance-gpu-count"] = fmt.Sprint(aws.ToInt32(g.Count))
		if g.MemoryInfo != nil {
			labels["karpenter.k8s.aws/instance-gpu-memory"] = fmt.Sprint(aws.ToInt32(g.MemoryInfo.SizeInMiB))
		}
	}
	return labels
}

// offerings of a type in the region: zone -> capacity types EC2 sells it as there (on-demand and
// spot from SupportedUsageClasses, reserved where a reservation is seeded).
func typeOfferings(d *InstanceData, region RegionData, reservations []ec2types.CapacityReservation, instanceType string) map[string][]string {
	info := d.ByName[instanceType]
	usage := lo.Map(info.SupportedUsageClasses, func(u ec2types.UsageClassType, _ int) string { return string(u) })
	out := map[string][]string{}
	for _, o := range region.Offerings {
		if string(o.InstanceType) != instanceType {
			continue
		}
		z := aws.ToString(o.Location)
		for _, u := range usage {
			switch u {
			case "on-demand":
				out[z] = append(out[z], karpv1.CapacityTypeOnDemand)
			case "spot":
				out[z] = append(out[z], karpv1.CapacityTypeSpot)
			}
		}
	}
	for _, cr := range reservations {
		if aws.ToString(cr.InstanceType) == instanceType && aws.ToInt32(cr.TotalInstanceCount) > 0 {
			z := aws.ToString(cr.AvailabilityZone)
			out[z] = append(out[z], karpv1.CapacityTypeReserved)
		}
	}
	return out
}

// admittedTypes: every instance type of AWS's data that the NodePool's requirements admit in the
// render's region: each requirement on a label the type carries (typeLabels) holds, and some
// offering (zone with a subnet of the render, capacity type) holds the zone and capacity-type
// requirements. The requirement algebra (In, NotIn, Exists, DoesNotExist, Gt, Lt) is Karpenter's
// own (sigs.k8s.io/karpenter v1.15.0 pkg/scheduling/requirement.go Has); the labels and offerings
// are not taken from Karpenter. A requirement on a key the oracle does not know is an error.
func admittedTypes(np *karpv1.NodePool, d *InstanceData, region RegionData, subnetZones []string, reservations []ec2types.CapacityReservation) ([]string, error) {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	known := map[string]bool{corev1.LabelTopologyZone: true, karpv1.CapacityTypeLabelKey: true}
	var out []string
	for _, info := range d.Types {
		labels := typeLabels(info)
		for k := range labels {
			known[k] = true
		}
		ok := true
		for _, key := range reqs.Keys().UnsortedList() {
			if key == corev1.LabelTopologyZone || key == karpv1.CapacityTypeLabelKey {
				continue
			}
			v, has := labels[key]
			req := reqs.Get(key)
			if has && !req.Has(v) || !has && req.Operator() != corev1.NodeSelectorOpDoesNotExist && req.Operator() != corev1.NodeSelectorOpNotIn {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		name := string(info.InstanceType)
		offered := false
		for z, cts := range typeOfferings(d, region, reservations, name) {
			if !lo.Contains(subnetZones, z) || !reqs.Get(corev1.LabelTopologyZone).Has(z) {
				continue
			}
			for _, ct := range cts {
				if reqs.Get(karpv1.CapacityTypeLabelKey).Has(ct) {
					offered = true
				}
			}
		}
		if offered {
			out = append(out, name)
		}
	}
	for _, key := range reqs.Keys().UnsortedList() {
		if !known[key] && !strings.HasPrefix(key, "eks-gpu-platform.io/") {
			return nil, fmt.Errorf("NodePool %s: requirement on %s, a label the oracle cannot derive from AWS's data", np.Name, key)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ---- what the stack file declares ----

// stackPool is one entry of the stack file's eks-gpu-platform:nodePools: what the user asked
// the pool to run (the input of the code under test, not its output).
type stackPool struct {
	Name          string   `json:"name"`
	Kind          string   `json:"kind"`
	GPUs          []string `json:"gpus"`
	InstanceTypes []string `json:"instanceTypes"`
	Families      []string `json:"instanceFamilies"`
	CapacityTypes []string `json:"capacityTypes"`
	Zone          string   `json:"zone"`
}

// stackPools reads the stack file the render was made from: <renders>/../stacks/Pulumi.<stack>.yaml
// (tests/conformance/stacks.py writes the dev-1.35 and generated ones there; for a known-bad
// render, the good renders' directory), else the project's Pulumi.<stack>.yaml (stacks.py renders
// every one of those).
func stackPools(r *Render) (map[string]stackPool, string, error) {
	candidates := []string{
		filepath.Join(filepath.Dir(filepath.Dir(r.Dir)), "stacks", "Pulumi."+r.Stack+".yaml"),
	}
	// A known-bad render (<bad>/<mutation>/<stack>) was made from the good render's stack file.
	if good, _, err := render.Renders(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(good), "stacks", "Pulumi."+r.Stack+".yaml"))
	}
	candidates = append(candidates, filepath.Join(repoDir, "Pulumi."+r.Stack+".yaml"))
	for _, path := range candidates {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var doc struct {
			Config map[string]any `json:"config"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, path, fmt.Errorf("%s: %w", path, err)
		}
		raw, err := yaml.Marshal(doc.Config["eks-gpu-platform:nodePools"])
		if err != nil {
			return nil, path, err
		}
		var pools []stackPool
		if err := yaml.Unmarshal(raw, &pools); err != nil {
			return nil, path, fmt.Errorf("%s: eks-gpu-platform:nodePools: %w", path, err)
		}
		out := map[string]stackPool{}
		for _, p := range pools {
			out[p.Name] = p
		}
		return out, path, nil
	}
	return nil, "", fmt.Errorf("render %s: no stack file (%s)", r.Stack, strings.Join(candidates, ", "))
}

// declares: whether the stack's pool entry allows the instance type (its gpus by AWS's GPU name,
// instanceFamilies, instanceTypes; a GPU pool: an NVIDIA GPU).
func (p stackPool) declares(d *InstanceData, instanceType string) (bool, string) {
	labels := typeLabels(d.ByName[instanceType])
	if p.Kind != "cpu" && labels["karpenter.k8s.aws/instance-gpu-manufacturer"] != "nvidia" {
		return false, fmt.Sprintf("%s has no NVIDIA GPU", instanceType)
	}
	if len(p.GPUs) > 0 && !lo.Contains(p.GPUs, labels["karpenter.k8s.aws/instance-gpu-name"]) {
		return false, fmt.Sprintf("%s's GPU is %s, the stack's pool %s declares gpus %v", instanceType, labels["karpenter.k8s.aws/instance-gpu-name"], p.Name, p.GPUs)
	}
	if len(p.Families) > 0 && !lo.Contains(p.Families, labels["karpenter.k8s.aws/instance-family"]) {
		return false, fmt.Sprintf("%s is not of the stack's pool %s instanceFamilies %v", instanceType, p.Name, p.Families)
	}
	if len(p.InstanceTypes) > 0 && !lo.Contains(p.InstanceTypes, instanceType) {
		return false, fmt.Sprintf("%s is not among the stack's pool %s instanceTypes %v", instanceType, p.Name, p.InstanceTypes)
	}
	return true, ""
}

// nodeUnits: the GPU units Karpenter charges a node of the type in the pool: a NodeOverlay of the
// render that selects the pool and the type and sets nvidia.com/gpu, else AWS's GPU count.
func nodeUnits(r *Render, d *InstanceData, pool, instanceType string) int64 {
	for _, o := range r.Kind("NodeOverlay") {
		reqs, _, _ := unstructuredSlice(o.Object.Object, "spec", "requirements")
		poolOK, typeOK := false, false
		for _, x := range reqs {
			m, _ := x.(map[string]any)
			vals, _ := m["values"].([]any)
			switch m["key"] {
			case poolLabel:
				poolOK = lo.Contains(vals, any(pool))
			case corev1.LabelInstanceTypeStable:
				typeOK = lo.Contains(vals, any(instanceType))
			}
		}
		capacity, _, _ := unstructuredMap(o.Object.Object, "spec", "capacity")
		if poolOK && typeOK && capacity[string(gpu)] != nil {
			q := qty(fmt.Sprint(capacity[string(gpu)]))
			return q.Value()
		}
	}
	return int64(gpuCount(d, instanceType))
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	switch v := cur.(type) {
	case int64:
		return v, true, nil
	case float64:
		return int64(v), true, nil
	case int:
		return int64(v), true, nil
	}
	return 0, false, nil
}

// ---- the oracles applied to a harness ----

// gpuNodePools: pool -> its NodePools with an nvidia.com/gpu limit, from the rendered NodePools'
// eks-gpu-platform.io/pool template label (not capacity.json), sorted.
func gpuNodePools(h *Harness) map[string][]string {
	out := map[string][]string{}
	for _, name := range sortedKeys(h.NodePools) {
		np := h.NodePools[name]
		if _, ok := np.Spec.Limits[gpu]; ok {
			pool := np.Spec.Template.Labels[poolLabel]
			out[pool] = append(out[pool], name)
		}
	}
	return out
}

// seededReservations: the capacity reservations the fake EC2 holds (reservations_test.go).
func (h *Harness) seededReservations() []ec2types.CapacityReservation {
	if h.AWS.EC2API.DescribeCapacityReservationsOutput.IsNil() {
		return nil
	}
	return h.AWS.EC2API.DescribeCapacityReservationsOutput.Clone().CapacityReservations
}

// typeOracle is, per NodePool, the instance types its requirements admit on AWS's data, and the
// stack's declaration of its pool.
type typeOracle struct {
	admitted  map[string][]string // NodePool -> types
	stack     map[string]stackPool
	stackFile string
}

func newTypeOracle(h *Harness, d *InstanceData) (*typeOracle, error) {
	subnets, err := h.Render.Subnets()
	if err != nil {
		return nil, err
	}
	zones := lo.Uniq(lo.Map(subnets, func(s Subnet, _ int) string { return s.Zone }))
	o := &typeOracle{admitted: map[string][]string{}}
	for name, np := range h.NodePools {
		if o.admitted[name], err = admittedTypes(np, d, d.Regions[h.Region], zones, h.seededReservations()); err != nil {
			return nil, err
		}
	}
	if o.stack, o.stackFile, err = stackPools(h.Render); err != nil {
		return nil, err
	}
	return o, nil
}

// check: the launch's type is one its NodePool's requirements admit and the stack's pool
// declares, and so is every instance type its NodeClaim could have launched (options); one
// message for the launched type, one per NodeClaim for the options outside.
func (o *typeOracle) check(scenario, pool string, l Launched, options []string) []error {
	var errs []error
	np := l.NodePool()
	sp, declared := o.stack[pool]
	judge := func(what string, types []string) {
		var notAdmitted, notDeclared, why []string
		for _, it := range types {
			if !lo.Contains(o.admitted[np], it) {
				notAdmitted = append(notAdmitted, it)
			}
			if !declared {
				continue
			}
			if ok, reason := sp.declares(instanceData, it); !ok {
				notDeclared = append(notDeclared, it)
				why = append(why, reason)
			}
		}
		if len(notAdmitted) > 0 {
			errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: %s %v, which the NodePool's requirements do not admit on AWS's instance data (admitted: %v)",
				scenario, pool, np, what, notAdmitted, o.admitted[np]))
		}
		if len(notDeclared) > 0 {
			errs = append(errs, fmt.Errorf("%s: pool %s, NodePool %s: %s %v, outside the pool the stack declares (%s): %s",
				scenario, pool, np, what, notDeclared, filepath.Base(o.stackFile), strings.Join(lo.Uniq(why), "; ")))
		}
	}
	judge("launched", []string{l.InstanceType()})
	judge("NodeClaim "+l.NodeClaim.Name+" could launch", options)
	return errs
}

// smallestUnits: the fewest GPU units a node of any type the pool's NodePools admit is charged.
func (o *typeOracle) smallestUnits(r *Render, d *InstanceData, pool string, nodePools []string) int64 {
	smallest := int64(math.MaxInt64)
	for _, np := range nodePools {
		for _, it := range o.admitted[np] {
			if u := nodeUnits(r, d, pool, it); u > 0 && u < smallest {
				smallest = u
			}
		}
	}
	return smallest
}
