package karpenter

// The harness: the real Karpenter v1.15.0 core and its AWS provider v1.15.0 (the provider code of
// the pinned 1.15.1; issue 31) on a real
// kube-apiserver (envtest, KUBEBUILDER_ASSETS), with the provider's fake EC2/SSM/IAM/pricing APIs
// seeded from real instance data (instance_data.py) and from the render (subnets, security group,
// placement group). Wired as the controller's main does (karpenter-provider-aws v1.15.0
// cmd/controller/main.go: overlay.Decorate(awsCloudProvider, client, instanceTypeStore)), and as
// the provider's own suites do (pkg/cloudprovider/suite_test.go: coretest.NewEnvironment with the
// CRDs and the NodePool nodeClassRef field indexer, test.NewEnvironment for the providers).
// Line citations name the release they were read at: v1.15.0, the release the suite runs, or
// v1.15.1 for the chart (a v1.14.1 line is named only to compare; docs/karpenter-upgrade.md lists
// the differences).

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	opstatus "github.com/awslabs/operatorpkg/status"
	"github.com/go-logr/logr"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/aws/karpenter-provider-aws/pkg/apis"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awscloudprovider "github.com/aws/karpenter-provider-aws/pkg/cloudprovider"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	awsoptions "github.com/aws/karpenter-provider-aws/pkg/operator/options"
	awstest "github.com/aws/karpenter-provider-aws/pkg/test"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers/dynamicresources/deviceallocation"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/nodepool/readiness"
	"sigs.k8s.io/karpenter/pkg/controllers/nodepool/validation"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/metrics"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	coretest "sigs.k8s.io/karpenter/pkg/test"
)

// The API server and the provider environment are made once per test binary (TestMain): an
// envtest start costs seconds, and awstest.NewEnvironment registers its caches once.
var (
	suiteCtx context.Context
	coreEnv  *coretest.Environment
	awsEnv   *awstest.Environment
)

// Harness is one render's Karpenter: the providers reseeded from that render, its objects applied.
type Harness struct {
	Ctx       context.Context
	Render    *Render
	Client    client.Client
	AWS       *awstest.Environment
	Cloud     cloudprovider.CloudProvider // overlay.Decorate(aws cloud provider): what the provisioner sees
	AWSCloud  *awscloudprovider.CloudProvider
	Cluster   *state.Cluster
	Prov      *provisioning.Provisioner
	Overlays  *nodeoverlay.Controller
	NodeClass *nodeclass.Controller
	Recorder  events.Recorder
	Region    string
	// Gates: the rendered Karpenter chart values' settings.featureGates.
	NodeOverlayGate, ReservedCapacityGate bool
	// K8sMinor is the Kubernetes minor the AMI aliases resolve with (the version provider's answer).
	K8sMinor string
	// NodeClasses, NodePools, NodeOverlays as applied (typed).
	NodeClasses map[string]*awsv1.EC2NodeClass
	NodePools   map[string]*karpv1.NodePool
	// bound: the pods this harness bound, so the next round waits until the client's cache has
	// seen each binding (the provisioner lists pending pods from that cache: a pod bound in the
	// round before but still pending there would be scheduled twice).
	bound []types.NamespacedName
}

func startSuite() error {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return fmt.Errorf("KUBEBUILDER_ASSETS is unset: it names the directory of kube-apiserver v1.36.3 " +
			"and etcd (make conformance builds them into tests/conformance/.bin/envtest)")
	}
	ctrllog.SetLogger(logr.Discard())
	ctx := log.IntoContext(context.Background(), logr.Discard())
	coreEnv = coretest.NewEnvironment(
		coretest.WithCRDs(apis.CRDs...),
		coretest.WithFieldIndexers(coretest.NodePoolNodeClassRefFieldIndexer(ctx),
			// The nodeclaim pod-events and disruption controllers find a node's NodeClaim and a
			// NodeClaim's Node by provider ID (karpenter v1.15.0 pkg/utils/node, pkg/utils/nodeclaim).
			coretest.NodeClaimProviderIDFieldIndexer(ctx), coretest.NodeProviderIDFieldIndexer(ctx)),
	)
	ctx = coreoptions.ToContext(ctx, coretest.Options())
	ctx = awsoptions.ToContext(ctx, awstest.Options())
	awsEnv = awstest.NewEnvironment(ctx, coreEnv)
	suiteCtx = ctx
	return nil
}

func stopSuite() {
	if coreEnv != nil {
		_ = coreEnv.Stop()
	}
}

// NewHarness resets the fakes and the API server's objects, seeds the fakes for the render, and
// applies the render's Karpenter objects; then the EC2NodeClasses and NodePools are reconciled to
// Ready and the overlay store is filled, as the running controller would.
func NewHarness(render *Render, data *InstanceData) (*Harness, error) {
	h, err := NewBareHarness(render, data)
	if err != nil {
		return nil, err
	}
	if err := h.applyKarpenterObjects(); err != nil {
		return nil, err
	}
	return h, nil
}

// NewBareHarness is NewHarness without applying the render's objects: the API server cleaned, the
// fakes seeded, the controllers wired.
func NewBareHarness(render *Render, data *InstanceData) (*Harness, error) {
	if err := cleanAPIServer(suiteCtx, coreEnv.Client); err != nil {
		return nil, fmt.Errorf("cleaning the API server between scenarios: %w", err)
	}
	values, err := render.KarpenterValues()
	if err != nil {
		return nil, err
	}
	h := &Harness{
		Render:               render,
		Client:               coreEnv.Client,
		AWS:                  awsEnv,
		Region:               render.Region,
		NodeOverlayGate:      values.NodeOverlay,
		ReservedCapacityGate: values.ReservedCapacity,
		NodeClasses:          map[string]*awsv1.EC2NodeClass{},
		NodePools:            map[string]*karpv1.NodePool{},
	}
	// IGNORE_DRA_REQUESTS is false where the chart turns DRA on (dra_test.go withDRA).
	ctx := coreoptions.ToContext(suiteCtx, coretest.Options(coretest.OptionsFields{IgnoreDRARequests: lo.ToPtr(!values.DRANVIDIAGPU), FeatureGates: coretest.FeatureGates{
		NodeOverlay:      lo.ToPtr(values.NodeOverlay),
		ReservedCapacity: lo.ToPtr(values.ReservedCapacity),
	}}))
	ctx = awsoptions.ToContext(ctx, awstest.Options(awstest.OptionsFields{
		ClusterName:       lo.ToPtr(values.ClusterName),
		InterruptionQueue: lo.ToPtr(values.InterruptionQueue),
	}))
	ctx = withDRA(ctx, values.DRANVIDIAGPU)
	h.Ctx = ctx
	awsEnv.Reset()
	// The cluster's own version (kube-apiserver v1.36.3): a scenario may have changed it.
	if err := awsEnv.VersionProvider.UpdateVersion(suiteCtx); err != nil {
		return nil, err
	}
	if err := h.seed(data); err != nil {
		return nil, err
	}
	recorder := events.NewRecorder(&record.FakeRecorder{})
	h.Recorder = recorder
	h.AWSCloud = awscloudprovider.New(awsEnv.InstanceTypesProvider, awsEnv.InstanceProvider, recorder, h.Client,
		awsEnv.AMIProvider, awsEnv.SecurityGroupProvider, awsEnv.CapacityReservationProvider,
		awsEnv.PlacementGroupProvider, awsEnv.InstanceTypeStore, lo.ToPtr("ca-bundle"))
	h.Cloud = overlay.Decorate(h.AWSCloud, h.Client, awsEnv.InstanceTypeStore)
	h.Cluster = state.NewCluster(awsEnv.Clock, h.Client, h.Cloud)
	// Hydrated, as the running controller's is before its first round: with DRA on, the provisioner
	// waits for it (karpenter v1.15.0 pkg/controllers/dynamicresources/deviceallocation/
	// controller.go L139-150, L248-263).
	devices := deviceallocation.NewController(h.Client)
	devices.Hydrate(ctx)
	h.Prov = provisioning.NewProvisioner(h.Client, recorder, h.Cloud, h.Cluster, awsEnv.Clock,
		devices, virtualpods.NewVirtualPodCache(h.Client))
	// The overlay controller reads the undecorated provider (karpenter-provider-aws v1.15.0
	// cmd/controller/main.go L53-54; karpenter v1.15.0 pkg/controllers/controllers.go L193).
	h.Overlays = nodeoverlay.NewController(awsEnv.Clock, h.Client, h.AWSCloud, awsEnv.InstanceTypeStore, h.Cluster)
	h.NodeClass = nodeclass.NewController(awsEnv.Clock, h.Client, h.AWSCloud, recorder, fake.DefaultRegion,
		awsEnv.SubnetProvider, awsEnv.SecurityGroupProvider, awsEnv.AMIProvider, awsEnv.InstanceProfileProvider,
		awsEnv.InstanceTypesProvider, awsEnv.LaunchTemplateProvider, awsEnv.CapacityReservationProvider,
		awsEnv.PlacementGroupProvider, awsEnv.EC2API, awsEnv.ValidationCache, awsEnv.RecreationCache,
		// v1.15.0 adds the kubelet CEL environment (the open EC2NodeClass kubelet's maxPods
		// expressions), built once by the provider's test environment (pkg/test/environment.go
		// L172) as the controller's main does.
		awsEnv.AMIResolver, awsEnv.CELEnvironment, true)
	return h, nil
}

// seed gives the fakes the render's world: real instance types and zone offerings of its region,
// its private subnets (resources.json, with their tags), the security group the render tags for
// discovery, the placement groups it creates, and the SSM parameters and images of the AMI aliases.
func (h *Harness) seed(data *InstanceData) error {
	region, ok := data.Regions[h.Region]
	if !ok {
		return fmt.Errorf("instance data has no region %s (re-run tests/conformance/instance_data.py with this render)", h.Region)
	}
	awsEnv.EC2API.DescribeInstanceTypesOutput.Set(&ec2.DescribeInstanceTypesOutput{InstanceTypes: data.Types})
	awsEnv.EC2API.DescribeInstanceTypeOfferingsOutput.Set(&ec2.DescribeInstanceTypeOfferingsOutput{InstanceTypeOfferings: region.Offerings})
	var zones []ec2types.AvailabilityZone
	for _, z := range sortedKeys(region.ZoneIDs) {
		zones = append(zones, ec2types.AvailabilityZone{ZoneName: aws.String(z), ZoneId: aws.String(region.ZoneIDs[z]),
			ZoneType: aws.String("availability-zone"), RegionName: aws.String(h.Region)})
	}
	awsEnv.EC2API.DescribeAvailabilityZonesOutput.Set(&ec2.DescribeAvailabilityZonesOutput{AvailabilityZones: zones})
	subnets, err := h.Render.Subnets()
	if err != nil {
		return err
	}
	for i, s := range subnets {
		id := fmt.Sprintf("subnet-%s-%d", s.Zone, i)
		awsEnv.EC2API.Subnets.Store(id, ec2types.Subnet{
			SubnetId: aws.String(id), AvailabilityZone: aws.String(s.Zone), AvailabilityZoneId: aws.String(region.ZoneIDs[s.Zone]),
			AvailableIpAddressCount: aws.Int32(8000), MapPublicIpOnLaunch: aws.Bool(s.Public),
			Tags: ec2Tags(s.Tags),
		})
	}
	sgs, err := h.Render.SecurityGroups()
	if err != nil {
		return err
	}
	awsEnv.EC2API.DescribeSecurityGroupsBehavior.Output.Set(&ec2.DescribeSecurityGroupsOutput{SecurityGroups: sgs})
	// The AMI aliases: AWS publishes one SSM parameter per Kubernetes minor, architecture, variant
	// and release (EKS user guide "Retrieve recommended Amazon Linux AMI IDs"; the release names
	// amazon-eks-node-al2023-<arch>-<variant>-<minor>-<release>). Only those names resolve: the
	// fake SSM errors on any other (karpenter-provider-aws v1.15.0 pkg/fake/ssmapi.go GetParameter).
	params, images := publishedAMIs(h.Render.AMIAliases(), supportedMinors)
	awsEnv.SSMAPI.Parameters = params
	awsEnv.EC2API.DescribeImagesOutput.Set(&ec2.DescribeImagesOutput{Images: images})
	if err := h.seedPlacementGroups(); err != nil {
		return err
	}
	if err := h.seedCapacityReservations(data); err != nil {
		return err
	}
	if err := awsEnv.InstanceTypesProvider.UpdateInstanceTypes(suiteCtx); err != nil {
		return err
	}
	return awsEnv.InstanceTypesProvider.UpdateInstanceTypeOfferings(suiteCtx)
}

// applyKarpenterObjects applies the render's PriorityClasses, NodeOverlays, EC2NodeClasses and
// NodePools through the real API server (their CRDs' CEL validation included), reconciles each
// EC2NodeClass with the provider's nodeclass controller and each NodePool with the readiness and
// validation controllers, then runs the overlay controller once.
func (h *Harness) applyKarpenterObjects() error {
	for _, d := range h.Render.Kind("PriorityClass", "Namespace") {
		if err := createObject(h.Ctx, h.Client, d.Object.DeepCopy()); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	if h.NodeOverlayGate {
		for _, d := range h.Render.Kind("NodeOverlay") {
			var o v1alpha1.NodeOverlay
			if err := fromUnstructured(d.Object, &o); err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
			if err := h.Client.Create(h.Ctx, &o); err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
		}
	}
	for _, d := range h.Render.Kind("EC2NodeClass") {
		var nc awsv1.EC2NodeClass
		if err := fromUnstructured(d.Object, &nc); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if err := h.Client.Create(h.Ctx, &nc); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		h.NodeClasses[nc.Name] = &nc
	}
	for _, d := range h.Render.Kind("NodePool") {
		var np karpv1.NodePool
		if err := fromUnstructured(d.Object, &np); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if err := h.Client.Create(h.Ctx, &np); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		h.NodePools[np.Name] = &np
	}
	return h.Reconcile()
}

// Reconcile runs the nodeclass, NodePool readiness/validation and overlay controllers once more.
func (h *Harness) Reconcile() error {
	for name := range h.NodeClasses {
		nc := &awsv1.EC2NodeClass{}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: name}, nc); err != nil {
			return err
		}
		if _, err := h.NodeClass.Reconcile(h.Ctx, nc); err != nil {
			return fmt.Errorf("EC2NodeClass %s: nodeclass controller: %w", name, err)
		}
		h.NodeClasses[name] = nc
	}
	readinessCtrl := readiness.NewController(awsEnv.Clock, h.Client, h.AWSCloud)
	validationCtrl := validation.NewController(awsEnv.Clock, h.Client, h.AWSCloud)
	for name := range h.NodePools {
		np := &karpv1.NodePool{}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: name}, np); err != nil {
			return err
		}
		if _, err := validationCtrl.Reconcile(h.Ctx, np); err != nil {
			return fmt.Errorf("NodePool %s: validation controller: %w", name, err)
		}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: name}, np); err != nil {
			return err
		}
		if _, err := readinessCtrl.Reconcile(h.Ctx, np); err != nil {
			return fmt.Errorf("NodePool %s: readiness controller: %w", name, err)
		}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: name}, np); err != nil {
			return err
		}
		h.NodePools[name] = np
	}
	if h.NodeOverlayGate {
		if _, err := h.Overlays.Reconcile(h.Ctx, reconcile.Request{}); err != nil {
			return fmt.Errorf("nodeoverlay controller: %w", err)
		}
	}
	return nil
}

// NotReady lists the EC2NodeClasses and NodePools that are not Ready, with their conditions.
func (h *Harness) NotReady() []error {
	var errs []error
	for _, name := range sortedKeys(h.NodeClasses) {
		nc := h.NodeClasses[name]
		if !nc.StatusConditions().Root().IsTrue() {
			errs = append(errs, fmt.Errorf("EC2NodeClass %s is not Ready: %s", name, conditions(nc.Status.Conditions)))
		}
	}
	for _, name := range sortedKeys(h.NodePools) {
		np := h.NodePools[name]
		if !np.StatusConditions().Root().IsTrue() {
			errs = append(errs, fmt.Errorf("NodePool %s is not Ready: %s", name, conditions(np.Status.Conditions)))
		}
	}
	return errs
}

// Launched is one NodeClaim Karpenter created and the cloud provider launched, with its Node.
type Launched struct {
	NodeClaim *karpv1.NodeClaim
	Node      *corev1.Node
	Pods      []*corev1.Pod
	Options   []string // the instance types its NodeClaim could have launched (InstanceTypeOptions)
}

func (l Launched) InstanceType() string { return l.NodeClaim.Labels[corev1.LabelInstanceTypeStable] }
func (l Launched) NodePool() string     { return l.NodeClaim.Labels[karpv1.NodePoolLabelKey] }
func (l Launched) CapacityType() string { return l.NodeClaim.Labels[karpv1.CapacityTypeLabelKey] }
func (l Launched) Zone() string         { return l.NodeClaim.Labels[corev1.LabelTopologyZone] }

// Round is one provisioning round's outcome.
type Round struct {
	Launched  []Launched
	PodErrors map[*corev1.Pod]error
	Options   map[string][]string // NodeClaim name -> the instance types it could have launched
	Failed    []FailedLaunch      // NodeClaims whose launch failed for insufficient capacity (deleted)
}

// FailedLaunch is a NodeClaim the cloud provider could not launch for insufficient capacity.
type FailedLaunch struct {
	NodeClaim *karpv1.NodeClaim
	Err       error
}

// Provision creates the pods (pending: PodScheduled=False/Unschedulable, what Karpenter provisions
// for: pkg/utils/pod/scheduling.go IsProvisionable), runs one scheduling round of the real
// provisioner, creates its NodeClaims (provisioner.Create, which re-checks the limits), launches
// them through the cloud provider (the fake CreateFleet), registers the Node (the NodeClaim's
// capacity, as a joined node reports) and binds the pods, as pkg/test/expectations
// ExpectProvisioned does; errors are returned, not asserted.
func (h *Harness) Provision(pods ...*corev1.Pod) (*Round, error) {
	if err := h.awaitBound(); err != nil {
		return nil, err
	}
	for _, p := range pods {
		if err := createPendingPod(h.Ctx, h.Client, p); err != nil {
			return nil, err
		}
	}
	results, err := h.Prov.Schedule(h.Ctx)
	if err != nil {
		return nil, fmt.Errorf("provisioner.Schedule: %w", err)
	}
	round := &Round{PodErrors: results.PodErrors, Options: map[string][]string{}}
	for _, nc := range results.NewNodeClaims {
		name, err := h.Prov.Create(h.Ctx, nc, provisioning.WithReason(metrics.ProvisionedReason))
		if err != nil {
			// provisioner.Create refuses a claim whose NodePool limit is exceeded (provisioner.go
			// L485 ExceededBy): its pods stay pending.
			for _, p := range nc.Pods {
				round.PodErrors[p] = fmt.Errorf("provisioner.Create: %w", err)
			}
			continue
		}
		claim := &karpv1.NodeClaim{}
		if err := h.Client.Get(h.Ctx, types.NamespacedName{Name: name}, claim); err != nil {
			return nil, err
		}
		round.Options[name] = lo.Map(nc.InstanceTypeOptions, func(it *cloudprovider.InstanceType, _ int) string { return it.Name })
		launched, err := h.launch(claim)
		if cloudprovider.IsInsufficientCapacityError(err) {
			// As the NodeClaim lifecycle controller does: the NodeClaim is deleted, its pods stay
			// pending (karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/launch.go L96-102).
			if derr := h.Client.Delete(h.Ctx, claim); derr != nil && !apierrors.IsNotFound(derr) {
				return nil, derr
			}
			round.Failed = append(round.Failed, FailedLaunch{NodeClaim: claim, Err: err})
			for _, p := range nc.Pods {
				round.PodErrors[p] = fmt.Errorf("NodeClaim %s: cloudProvider.Create: %w", name, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("NodeClaim %s (NodePool %s): cloudProvider.Create: %w", name, claim.Labels[karpv1.NodePoolLabelKey], err)
		}
		launched.Options = round.Options[name]
		for _, p := range nc.Pods {
			if err := bindPod(h.Ctx, h.Client, p, launched.Node.Name); err != nil {
				return nil, err
			}
			h.bound = append(h.bound, client.ObjectKeyFromObject(p))
			if err := h.Cluster.UpdatePod(h.Ctx, p); err != nil {
				return nil, err
			}
			launched.Pods = append(launched.Pods, p)
		}
		round.Launched = append(round.Launched, launched)
	}
	for _, en := range results.ExistingNodes {
		for _, p := range en.Pods {
			if err := bindPod(h.Ctx, h.Client, p, en.Node.Name); err != nil {
				return nil, err
			}
			h.bound = append(h.bound, client.ObjectKeyFromObject(p))
			if err := h.Cluster.UpdatePod(h.Ctx, p); err != nil {
				return nil, err
			}
		}
	}
	return round, nil
}

// launch is pkg/test/expectations ExpectNodeClaimDeployed + state update, returning errors.
func (h *Harness) launch(claim *karpv1.NodeClaim) (Launched, error) {
	resolved, err := h.Cloud.Create(h.Ctx, claim)
	if err != nil {
		return Launched{}, err
	}
	claim = lifecycle.PopulateNodeClaimDetails(claim, resolved)
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeRegistered)
	node := coretest.NodeClaimLinkedNode(claim)
	node.Spec.Taints = lo.Reject(node.Spec.Taints, func(t corev1.Taint, _ int) bool { return t.MatchTaint(&karpv1.UnregisteredNoExecuteTaint) })
	node.Labels = lo.Assign(node.Labels, map[string]string{karpv1.NodeRegisteredLabelKey: "true"})
	claim.Status.NodeName = node.Name
	if err := applyWithStatus(h.Ctx, h.Client, claim); err != nil {
		return Launched{}, err
	}
	if err := applyWithStatus(h.Ctx, h.Client, node); err != nil {
		return Launched{}, err
	}
	h.Cluster.UpdateNodeClaim(claim)
	if err := h.Cluster.UpdateNode(h.Ctx, node); err != nil {
		return Launched{}, err
	}
	return Launched{NodeClaim: claim, Node: node}, nil
}

// Flood provisions rounds of pods until a round launches nothing (or maxRounds), returning every
// launch. Each round adds `perRound` new pods from make.
func (h *Harness) Flood(makePod func(i int) *corev1.Pod, perRound, maxRounds int) ([]Launched, *Round, error) {
	var all []Launched
	var last *Round
	n := 0
	for r := 0; r < maxRounds; r++ {
		var pods []*corev1.Pod
		for i := 0; i < perRound; i++ {
			pods = append(pods, makePod(n))
			n++
		}
		round, err := h.Provision(pods...)
		if err != nil {
			return all, round, err
		}
		last = round
		if len(round.Launched) == 0 {
			break
		}
		all = append(all, round.Launched...)
	}
	return all, last, nil
}

// ---- API server helpers ----

// fromUnstructured decodes strictly: a field the typed API does not know is an error.
func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true)
}

// fromUnstructuredLoose decodes into a partial view (the fields a struct names).
func fromUnstructuredLoose(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

func createObject(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	err := c.Create(ctx, u)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func createPendingPod(ctx context.Context, c client.Client, p *corev1.Pod) error {
	statusCopy := p.Status.DeepCopy()
	if err := c.Create(ctx, p); err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	p.Status = *statusCopy
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if err := c.Status().Update(ctx, p); err != nil {
		return fmt.Errorf("pod %s/%s status: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// awaitBound waits (at most 30 s) until the client's cache shows every pod the harness bound
// with its node, then forgets them.
func (h *Harness) awaitBound() error {
	deadline := time.Now().Add(30 * time.Second)
	for _, key := range h.bound {
		for {
			pod := &corev1.Pod{}
			err := h.Client.Get(h.Ctx, key, pod)
			if apierrors.IsNotFound(err) || (err == nil && pod.Spec.NodeName != "") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pod %s: the client's cache has not seen its binding after 30 s (err %v)", key, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	h.bound = nil
	return nil
}

func bindPod(ctx context.Context, c client.Client, p *corev1.Pod, node string) error {
	stored := p.DeepCopy()
	p.Spec.NodeName = node
	if err := c.Patch(ctx, p, client.MergeFrom(stored)); err != nil {
		// spec.nodeName is immutable once set: a Binding is what kube-scheduler posts.
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Target: corev1.ObjectReference{Name: node}}
		if err := c.SubResource("binding").Create(ctx, stored, binding); err != nil {
			return fmt.Errorf("binding pod %s/%s to %s: %w", p.Namespace, p.Name, node, err)
		}
		p.Spec.NodeName = node
	}
	return nil
}

func applyWithStatus(ctx context.Context, c client.Client, obj client.Object) error {
	statusCopy := obj.DeepCopyObject().(client.Object)
	current := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	} else {
		obj.SetResourceVersion(current.GetResourceVersion())
		if err := c.Update(ctx, obj); err != nil {
			return fmt.Errorf("updating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	statusCopy.SetResourceVersion(obj.GetResourceVersion())
	if err := c.Status().Update(ctx, statusCopy); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of %T %s: %w", obj, obj.GetName(), err)
	}
	return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

// cleanAPIServer removes what a scenario created (pods, nodes, NodeClaims, NodePools,
// EC2NodeClasses, NodeOverlays, admission policies, DaemonSets), finalizers first.
func cleanAPIServer(ctx context.Context, c client.Client) error {
	lists := []client.ObjectList{
		&corev1.PodList{}, &karpv1.NodeClaimList{}, &corev1.NodeList{}, &karpv1.NodePoolList{},
		&awsv1.EC2NodeClassList{}, &v1alpha1.NodeOverlayList{},
		&resourcev1.ResourceClaimList{}, &resourcev1.DeviceClassList{}, // the dra-claim scenario's
	}
	for _, list := range lists {
		if err := c.List(ctx, list); err != nil {
			return err
		}
		items, err := metaItems(list)
		if err != nil {
			return err
		}
		for _, o := range items {
			if len(o.GetFinalizers()) > 0 {
				stored := o.DeepCopyObject().(client.Object)
				o.SetFinalizers(nil)
				if err := c.Patch(ctx, o, client.MergeFrom(stored)); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
			if err := c.Delete(ctx, o, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	for _, gvk := range []string{"MutatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("admissionregistration.k8s.io/v1")
		list.SetKind(gvk + "List")
		if err := c.List(ctx, list); err != nil {
			continue
		}
		for i := range list.Items {
			_ = c.Delete(ctx, &list.Items[i])
		}
	}
	// Deletion is asynchronous for pods with a grace period; wait until the kinds are empty.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pods := &corev1.PodList{}
		claims := &karpv1.NodeClaimList{}
		if err := c.List(ctx, pods); err != nil {
			return err
		}
		if err := c.List(ctx, claims); err != nil {
			return err
		}
		if len(pods.Items) == 0 && len(claims.Items) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pods or NodeClaims still present 30 s after deletion")
}

func metaItems(list client.ObjectList) ([]client.Object, error) {
	// meta.ExtractList returns a pointer to each item of a typed list (apimachinery v0.36.3
	// pkg/api/meta/help.go L202-204, L260-264: raw.Addr()).
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("metaItems: %w", err)
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("metaItems: %T is not a client.Object", item)
		}
		out = append(out, obj)
	}
	return out, nil
}

func ec2Tags(tags map[string]string) []ec2types.Tag {
	var out []ec2types.Tag
	for _, k := range sortedKeys(tags) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := lo.Keys(m)
	sort.Strings(keys)
	return keys
}

func conditions(cs []opstatus.Condition) string {
	var parts []string
	for _, c := range cs {
		if c.Status != metav1.ConditionTrue {
			parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// seedPlacementGroups: the placement groups the render creates (aws:ec2/placementGroup), under the
// names its EC2NodeClasses select, with the render's strategy.
func (h *Harness) seedPlacementGroups() error {
	res, err := h.Render.resources()
	if err != nil {
		return err
	}
	var groups []ec2types.PlacementGroup
	for _, d := range h.Render.Kind("EC2NodeClass") {
		var nc awsv1.EC2NodeClass
		if err := fromUnstructured(d.Object, &nc); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		sel := nc.Spec.PlacementGroupSelector
		if sel == nil || aws.ToString(sel.Name) == "" {
			continue
		}
		found := false
		for _, x := range res {
			// Pulumi's physical name is the logical name plus a random suffix.
			if x.Type == "aws:ec2/placementGroup:PlacementGroup" && strings.HasPrefix(aws.ToString(sel.Name), x.Name+"-") {
				found = true
				groups = append(groups, ec2types.PlacementGroup{
					GroupName: sel.Name, GroupId: aws.String("pg-" + x.Name), State: ec2types.PlacementGroupStateAvailable,
					Strategy: ec2types.PlacementStrategy(fmt.Sprint(x.Inputs["strategy"])),
				})
			}
		}
		if !found {
			return fmt.Errorf("EC2NodeClass %s selects placement group %q: resources.json creates none by that name", nc.Name, aws.ToString(sel.Name))
		}
	}
	h.AWS.EC2API.DescribePlacementGroupsOutput.Set(&ec2.DescribePlacementGroupsOutput{PlacementGroups: lo.UniqBy(groups, func(g ec2types.PlacementGroup) string { return *g.GroupName })})
	return nil
}
