package karpenter

// The suite's inputs: the renders (internal/render), the real instance data
// (CONFORMANCE_INSTANCE_DATA, written by tests/conformance/instance_data.py), and what a render
// says beyond its manifests (capacity.json, helm/karpenter.yaml, resources.json).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"sigs.k8s.io/yaml"

	"eks-gpu-platform.local/conformance/internal/render"
)

const EnvInstanceData = "CONFORMANCE_INSTANCE_DATA"

// Render is a loaded render plus the files the Karpenter scenarios read.
type Render struct {
	*render.Render
	Region   string
	Capacity Capacity
}

// Capacity is capacity.json (components/offline/capacity.py).
type Capacity struct {
	Pools []struct {
		Name              string                      `json:"name"`
		InstanceTypes     []string                    `json:"instanceTypes"`
		GPUsPerNode       map[string]int              `json:"gpusPerNode"`
		AdvertisedPerNode map[string]map[string]int   `json:"advertisedPerNode"`
		Limit             map[string]map[string]int64 `json:"limit"`
		MaxNodes          int                         `json:"maxNodes"`
		MaxGPUs           int                         `json:"maxGpus"`

		// DRADevicesPerNode: a DRA pool's gpu.nvidia.com devices per type (budget/dra.py).
		DRADevicesPerNode map[string]map[string]int `json:"draDevicesPerNode"`
	} `json:"pools"`
	Queues []struct {
		Name  string   `json:"name"`
		Quota int      `json:"quota"`
		Limit int      `json:"limit"`
		Pools []string `json:"pools"`
		// LargestGang: the GPUs one gang of the queue can get in its EFA pools (absent, 0,
		// for a queue routed to none): components/budget/plan.py.
		LargestGang float64 `json:"largestGang"`
	} `json:"queues"`
}

func LoadRender(stack, dir string) (*Render, error) {
	r, err := render.Load(stack, dir)
	if err != nil {
		return nil, err
	}
	out := &Render{Render: r}
	data, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", stack, err)
	}
	if err := json.Unmarshal(data, &out.Capacity); err != nil {
		return nil, fmt.Errorf("render %s: capacity.json: %w", stack, err)
	}
	subnets, err := out.Subnets()
	if err != nil {
		return nil, err
	}
	if len(subnets) == 0 {
		return nil, fmt.Errorf("render %s: resources.json has no aws:ec2/subnet:Subnet", stack)
	}
	out.Region = subnets[0].Zone[:len(subnets[0].Zone)-1]
	return out, nil
}

// KarpenterValues is what the scenarios take from helm/karpenter.yaml.
type KarpenterValues struct {
	ClusterName, InterruptionQueue string
	NodeOverlay, ReservedCapacity  bool
	// DRANVIDIAGPU: settings.awsFeatureGates.draNVIDIAGPU (DRA pools, docs/dra-pools.md).
	DRANVIDIAGPU bool
}

func (r *Render) KarpenterValues() (KarpenterValues, error) {
	path := filepath.Join(r.Dir, "helm", "karpenter.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return KarpenterValues{}, err
	}
	var release struct {
		Values struct {
			Settings struct {
				ClusterName       string          `json:"clusterName"`
				InterruptionQueue string          `json:"interruptionQueue"`
				FeatureGates      map[string]bool `json:"featureGates"`
				AWSFeatureGates   map[string]bool `json:"awsFeatureGates"`
			} `json:"settings"`
		} `json:"values"`
	}
	if err := yaml.Unmarshal(data, &release); err != nil {
		return KarpenterValues{}, fmt.Errorf("%s: %w", path, err)
	}
	s := release.Values.Settings
	if s.ClusterName == "" {
		return KarpenterValues{}, fmt.Errorf("%s: no values.settings.clusterName", path)
	}
	// The chart's defaults when a gate is not rendered (karpenter-provider-aws v1.15.1
	// charts/karpenter/values.yaml settings.featureGates: L249 nodeOverlay false, L252
	// reservedCapacity true).
	overlay, ok := s.FeatureGates["nodeOverlay"]
	if !ok {
		overlay = false
	}
	reserved, ok := s.FeatureGates["reservedCapacity"]
	if !ok {
		reserved = true
	}
	// draNVIDIAGPU defaults to false (karpenter-provider-aws v1.15.1 charts/karpenter/values.yaml
	// L277-281; 1.14 has no such gate).
	return KarpenterValues{ClusterName: s.ClusterName, InterruptionQueue: s.InterruptionQueue, NodeOverlay: overlay,
		ReservedCapacity: reserved, DRANVIDIAGPU: s.AWSFeatureGates["draNVIDIAGPU"]}, nil
}

type pulumiResource struct {
	Type   string         `json:"type"`
	Name   string         `json:"name"`
	Inputs map[string]any `json:"inputs"`
}

func (r *Render) resources() ([]pulumiResource, error) {
	data, err := os.ReadFile(filepath.Join(r.Dir, "resources.json"))
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", r.Stack, err)
	}
	var out []pulumiResource
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("render %s: resources.json: %w", r.Stack, err)
	}
	return out, nil
}

// Subnet is one subnet the render creates (resources.json).
type Subnet struct {
	Zone   string
	Public bool
	Tags   map[string]string
}

func (r *Render) Subnets() ([]Subnet, error) {
	res, err := r.resources()
	if err != nil {
		return nil, err
	}
	var out []Subnet
	for _, x := range res {
		if x.Type != "aws:ec2/subnet:Subnet" {
			continue
		}
		s := Subnet{Zone: fmt.Sprint(x.Inputs["availabilityZone"]), Tags: map[string]string{}}
		if tags, ok := x.Inputs["tags"].(map[string]any); ok {
			for k, v := range tags {
				s.Tags[k] = fmt.Sprint(v)
			}
		}
		s.Public = s.Tags["kubernetes.io/role/elb"] == "1"
		out = append(out, s)
	}
	return out, nil
}

// SecurityGroups: the groups the render tags (aws:ec2/tag:Tag on the cluster security group) or
// creates with tags, carrying those tags: what the EC2NodeClasses' selectors can find.
func (r *Render) SecurityGroups() ([]ec2types.SecurityGroup, error) {
	res, err := r.resources()
	if err != nil {
		return nil, err
	}
	tagged := map[string]map[string]string{}
	for _, x := range res {
		if x.Type == "aws:ec2/tag:Tag" {
			id := fmt.Sprint(x.Inputs["resourceId"])
			if !strings.HasPrefix(id, "sg-") {
				continue
			}
			if tagged[id] == nil {
				tagged[id] = map[string]string{}
			}
			tagged[id][fmt.Sprint(x.Inputs["key"])] = fmt.Sprint(x.Inputs["value"])
		}
	}
	var out []ec2types.SecurityGroup
	for _, id := range sortedKeys(tagged) {
		out = append(out, ec2types.SecurityGroup{GroupId: aws.String(id), GroupName: aws.String(id), Tags: ec2Tags(tagged[id])})
	}
	return out, nil
}

// AMIAliases: every amiSelectorTerms alias of the render's EC2NodeClasses.
func (r *Render) AMIAliases() []string {
	seen := map[string]bool{}
	for _, d := range r.Kind("EC2NodeClass") {
		terms, _, _ := unstructuredSlice(d.Object.Object, "spec", "amiSelectorTerms")
		for _, t := range terms {
			if m, ok := t.(map[string]any); ok {
				if a, ok := m["alias"].(string); ok {
					seen[a] = true
				}
			}
		}
	}
	return sortedKeys(seen)
}

// InstanceData is the document instance_data.py writes.
type InstanceData struct {
	Types   []ec2types.InstanceTypeInfo
	ByName  map[string]ec2types.InstanceTypeInfo
	Regions map[string]RegionData
}

type RegionData struct {
	Offerings []ec2types.InstanceTypeOffering
	ZoneIDs   map[string]string
}

func LoadInstanceData(repo string) (*InstanceData, error) {
	path := os.Getenv(EnvInstanceData)
	if path == "" {
		path = filepath.Join(repo, "build", "conformance", "instance-types.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("instance data (%s, default <repo>/build/conformance/instance-types.json): %w; "+
			"write it with `python tests/conformance/instance_data.py build/dev build/prod` (make conformance does)", EnvInstanceData, err)
	}
	var doc struct {
		InstanceTypes []ec2types.InstanceTypeInfo `json:"instanceTypes"`
		Regions       map[string]struct {
			Offerings []ec2types.InstanceTypeOffering `json:"offerings"`
			ZoneIDs   map[string]string               `json:"zoneIds"`
		} `json:"regions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := &InstanceData{Types: doc.InstanceTypes, ByName: map[string]ec2types.InstanceTypeInfo{}, Regions: map[string]RegionData{}}
	for _, t := range doc.InstanceTypes {
		out.ByName[string(t.InstanceType)] = t
	}
	for r, v := range doc.Regions {
		out.Regions[r] = RegionData{Offerings: v.Offerings, ZoneIDs: v.ZoneIDs}
	}
	return out, nil
}

// supportedMinors: components/versions.py KARPENTER_MIN_VERSION_FOR_KUBERNETES's keys, read from
// the file (the Python package is the source of SUPPORTED_KUBERNETES_VERSIONS). Since issue 31
// they include 1.37, which Karpenter 1.15 supports but the config refuses (EKS does not offer
// it, KUBERNETES_NOT_ON_EKS): the ami-aliases scenario checks that no pinned alias is recorded
// as published for it, so its EC2NodeClasses stay AMIsReady=False there.
var supportedMinors []string

func loadSupportedMinors(repo string) error {
	path := filepath.Join(repo, "components", "versions.py")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	block := regexp.MustCompile(`(?s)KARPENTER_MIN_VERSION_FOR_KUBERNETES = \{(.*?)\}`).FindSubmatch(data)
	if block == nil {
		return fmt.Errorf("%s: no KARPENTER_MIN_VERSION_FOR_KUBERNETES dict", path)
	}
	for _, m := range regexp.MustCompile(`"(1\.\d+)":`).FindAllSubmatch(block[1], -1) {
		supportedMinors = append(supportedMinors, string(m[1]))
	}
	if len(supportedMinors) == 0 {
		return fmt.Errorf("%s: KARPENTER_MIN_VERSION_FOR_KUBERNETES is empty", path)
	}
	sort.Strings(supportedMinors)
	return nil
}

// publishedAMIs: the SSM parameters AWS publishes for an AL2023 alias release, for each minor,
// architecture and variant (x86_64 standard/nvidia/neuron, arm64 standard/nvidia), and one
// available image per parameter. Written here from AWS's naming, not from Karpenter's code: the
// judge is whether Karpenter's lookup lands on these names.
func publishedAMIs(aliases, minors []string) (map[string]string, []ec2types.Image) {
	params := map[string]string{}
	var images []ec2types.Image
	for _, alias := range aliases {
		family, release, ok := strings.Cut(alias, "@")
		if !ok || family != "al2023" {
			continue
		}
		for _, minor := range minors {
			for arch, variants := range map[string][]string{"x86_64": {"standard", "nvidia", "neuron"}, "arm64": {"standard", "nvidia"}} {
				for _, variant := range variants {
					name := fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, minor, release)
					path := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", minor, arch, variant, name)
					id := fmt.Sprintf("ami-%s-%s-%s", strings.ReplaceAll(minor, ".", ""), strings.ReplaceAll(arch, "_", ""), variant)
					params[path] = id
					images = append(images, ec2types.Image{
						ImageId: aws.String(id), Name: aws.String(name), Architecture: ec2types.ArchitectureValues(arch),
						CreationDate: aws.String("2026-09-03T00:00:00.000Z"), State: ec2types.ImageStateAvailable,
					})
				}
			}
		}
	}
	return params, images
}

func unstructuredSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur, ok = m[f]
		if !ok {
			return nil, false, nil
		}
	}
	s, ok := cur.([]any)
	return s, ok, nil
}
