package karpenter

// The AMI releases AWS published (testdata/ami-releases.yaml, each with its evidence) as the fake
// SSM's only parameters, named the way Karpenter v1.15.0 builds them, so an alias naming a
// release nobody published cannot resolve (review M1: the suite used to publish whatever release
// the alias named).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/samber/lo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awsoptions "github.com/aws/karpenter-provider-aws/pkg/operator/options"
	awstest "github.com/aws/karpenter-provider-aws/pkg/test"
)

// AMIRelease is one row of testdata/ami-releases.yaml.
type AMIRelease struct {
	Release  string   `json:"release"`
	Minors   []string `json:"minors"`
	Evidence []string `json:"evidence"`
}

type amiReleases struct {
	AL2023       []AMIRelease `json:"al2023"`
	Bottlerocket []AMIRelease `json:"bottlerocket"`
}

func loadAMIReleases() (*amiReleases, error) {
	path := filepath.Join(repoDir, "tests", "conformance", "testdata", "ami-releases.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out amiReleases
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range append(append([]AMIRelease{}, out.AL2023...), out.Bottlerocket...) {
		if len(r.Evidence) == 0 {
			return nil, fmt.Errorf("%s: release %s has no evidence", path, r.Release)
		}
	}
	return &out, nil
}

// published reports whether the table records family@release for the minor.
func (a *amiReleases) published(family, release, minor string) bool {
	rows := map[string][]AMIRelease{"al2023": a.AL2023, "bottlerocket": a.Bottlerocket}[family]
	for _, r := range rows {
		if r.Release == release && lo.Contains(r.Minors, minor) {
			return true
		}
	}
	return false
}

// amiParameter is one SSM parameter and the image it names.
type amiParameter struct{ Path, ImageID, Name, Arch string }

// parameters: every SSM parameter of the recorded releases, named as Karpenter v1.15.0 resolves
// an alias (pkg/providers/amifamily/al2023.go L50-54 the architectures and variants, L83-89
// resolvePath; bottlerocket.go L45-53, the release without its leading v).
func (a *amiReleases) parameters() []amiParameter {
	var out []amiParameter
	for _, r := range a.AL2023 {
		for _, minor := range r.Minors {
			for _, arch := range []string{"x86_64", "arm64"} {
				variants := map[string][]string{"x86_64": {"standard", "nvidia", "neuron"}, "arm64": {"standard", "nvidia"}}[arch]
				for _, variant := range variants {
					name := fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, minor, r.Release)
					out = append(out, amiParameter{
						Path:    fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", minor, arch, variant, name),
						ImageID: fmt.Sprintf("ami-al2023-%s-%s-%s-%s", strings.ReplaceAll(minor, ".", ""), strings.ReplaceAll(arch, "_", ""), variant, r.Release),
						Name:    name, Arch: arch,
					})
				}
			}
		}
	}
	for _, r := range a.Bottlerocket {
		version := strings.TrimPrefix(r.Release, "v")
		for _, minor := range r.Minors {
			for _, arch := range []string{"x86_64", "arm64"} {
				for _, suffix := range []string{"", "-nvidia"} {
					out = append(out, amiParameter{
						Path:    fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s%s/%s/%s/image_id", minor, suffix, arch, version),
						ImageID: fmt.Sprintf("ami-br-%s%s-%s-%s", strings.ReplaceAll(minor, ".", ""), suffix, strings.ReplaceAll(arch, "_", ""), version),
						Name:    fmt.Sprintf("bottlerocket-aws-k8s-%s%s-%s-v%s", minor, suffix, arch, version), Arch: arch,
					})
				}
			}
		}
	}
	return out
}

// seedRecordedAMIs replaces the fake SSM parameters and images with the recorded releases only:
// the fake SSM errors on any other name (karpenter-provider-aws v1.15.0 pkg/fake/ssmapi.go
// GetParameter), so Karpenter's lookup of an unpublished release finds nothing.
func (h *Harness) seedRecordedAMIs(a *amiReleases) {
	params := map[string]string{}
	var images []ec2types.Image
	for _, p := range a.parameters() {
		params[p.Path] = p.ImageID
		images = append(images, ec2types.Image{
			ImageId: aws.String(p.ImageID), Name: aws.String(p.Name), Architecture: ec2types.ArchitectureValues(p.Arch),
			CreationDate: aws.String("2026-07-14T00:00:00.000Z"), State: ec2types.ImageStateAvailable,
		})
	}
	h.AWS.SSMAPI.Parameters = params
	h.AWS.EC2API.DescribeImagesOutput.Set(&ec2.DescribeImagesOutput{Images: images})
	// The SSM provider caches a pinned (immutable) parameter's value for good
	// (pkg/providers/ssm/provider.go): forget what the harness's own seeding answered.
	h.AWS.SSMCache.Flush()
	h.AWS.AMICache.Flush()
}

// setClusterMinor makes the version provider answer minor (EKS DescribeCluster, with
// eksControlPlane, as karpenter-provider-aws v1.15.0 pkg/providers/version/version.go does on
// EKS) and returns the context that carries the option.
func (h *Harness) setClusterMinor(minor string) (context.Context, error) {
	ctx := awsoptions.ToContext(h.Ctx, awstest.Options(awstest.OptionsFields{
		ClusterName: lo.ToPtr(awsoptions.FromContext(h.Ctx).ClusterName), EKSControlPlane: lo.ToPtr(true),
	}))
	h.AWS.EKSAPI.DescribeClusterBehavior.Output.Set(&eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{Version: lo.ToPtr(minor)}})
	if err := h.AWS.VersionProvider.UpdateVersion(ctx); err != nil {
		return nil, fmt.Errorf("Kubernetes %s: version provider: %w", minor, err)
	}
	h.AWS.AMICache.Flush()
	return ctx, nil
}

// amisNotReady reconciles every EC2NodeClass with the nodeclass controller and returns, per
// class that is not AMIsReady, the reason.
func (h *Harness) amisNotReady(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range sortedKeys(h.NodeClasses) {
		nc := &awsv1.EC2NodeClass{}
		if err := h.Client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
			return nil, err
		}
		if _, err := h.NodeClass.Reconcile(ctx, nc); err != nil {
			out[name] = err.Error()
			continue
		}
		h.NodeClasses[name] = nc
		c := nc.StatusConditions().Get(awsv1.ConditionTypeAMIsReady)
		if c == nil || c.Status != metav1.ConditionTrue {
			msg := "no condition"
			if c != nil {
				msg = fmt.Sprintf("%s: %s", c.Reason, c.Message)
			}
			out[name] = msg
		}
	}
	return out, nil
}

// classAliases: each EC2NodeClass's amiSelectorTerms alias of the render.
func classAliases(r *Render) map[string]string {
	out := map[string]string{}
	for _, d := range r.Kind("EC2NodeClass") {
		terms, _, _ := unstructuredSlice(d.Object.Object, "spec", "amiSelectorTerms")
		for _, t := range terms {
			if m, ok := t.(map[string]any); ok {
				if a, ok := m["alias"].(string); ok {
					out[d.Object.GetName()] = a
				}
			}
		}
	}
	return out
}

// scenarioAMIReleases (ami-aliases): with the fake SSM answering only the recorded published
// releases, each EC2NodeClass's pinned alias must resolve (AMIsReady) on the cluster's own minor
// (kube-apiserver v1.36.3) exactly when the table records the release for it; on every other
// minor components/versions.py supports, AMIsReady must follow the table (True if recorded,
// False if not). An alias naming a release nobody published (al2023@v20991231) resolves nowhere.
func scenarioAMIReleases(r *Render, d *InstanceData) []error {
	h, herrs := newHarness(r, d)
	if herrs != nil {
		return herrs
	}
	table, err := loadAMIReleases()
	if err != nil {
		return []error{err}
	}
	h.seedRecordedAMIs(table)
	aliases := classAliases(r)
	var errs []error
	minors := append([]string{}, supportedMinors...)
	sort.Strings(minors)
	for _, minor := range minors {
		ctx, err := h.setClusterMinor(minor)
		if err != nil {
			return append(errs, err)
		}
		bad, err := h.amisNotReady(ctx)
		if err != nil {
			return append(errs, err)
		}
		for _, name := range sortedKeys(aliases) {
			family, release, _ := strings.Cut(aliases[name], "@")
			want := table.published(family, release, minor)
			why, notReady := bad[name]
			switch {
			case want && notReady:
				errs = append(errs, fmt.Errorf("ami-aliases: Kubernetes %s: EC2NodeClass %s alias %s is recorded as published (testdata/ami-releases.yaml) but Karpenter did not resolve it: %s", minor, name, aliases[name], why))
			case !want && !notReady:
				errs = append(errs, fmt.Errorf("ami-aliases: Kubernetes %s: EC2NodeClass %s alias %s resolved although no published release %s for %s is recorded: the fake SSM answered a name it must not know", minor, name, aliases[name], release, minor))
			case !want && minor == clusterMinor:
				errs = append(errs, fmt.Errorf("ami-aliases: EC2NodeClass %s: alias %s names a release not recorded as published for the cluster's Kubernetes %s (testdata/ami-releases.yaml, with evidence): Karpenter leaves it AMIsReady=False and launches no node (%s)", name, aliases[name], minor, why))
			}
		}
	}
	return errs
}

// clusterMinor: the minor kube-apiserver v1.36.3 serves (apiserver TestServerVersion), which the
// renders' clusters run.
const clusterMinor = "1.36"
