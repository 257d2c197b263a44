package karpenter

// The real disruption machinery of Karpenter v1.15.0 on the harness, driven the way upstream's
// own suite drives it (karpenter v1.15.0 pkg/controllers/disruption/suite_test.go L97-153): the
// provider environment's fake clock (k8s.io/utils/clock/testing FakeClock, moved with Step and
// SetTime, never slept on), disruption.NewController with the orchestration queue and the
// cluster cost, the cluster state fed by its informer controllers
// (pkg/controllers/state/informer), the nodeclaim disruption controller
// (pkg/controllers/nodeclaim/disruption: Consolidatable after consolidateAfter, Drifted), the
// pod events controller (pkg/controllers/nodeclaim/podevents: lastPodEventTime) and the
// expiration controller (pkg/controllers/nodeclaim/expiration). The validators are Karpenter's
// own (validation.go: they wait commandValidationDelay on the clock; the loop steps the fake
// clock while they wait, as ExpectToWait does upstream).

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/samber/lo"

	opstatus "github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	nodeclaimdisruption "sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/expiration"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/podevents"
	"sigs.k8s.io/karpenter/pkg/controllers/state/informer"
	"sigs.k8s.io/karpenter/pkg/state/cost"
)

// Loop is one render's disruption machinery.
type Loop struct {
	h          *Harness
	Clock      *clocktesting.FakeClock
	Queue      *disruption.Queue
	Controller *disruption.Controller
	Claims     *nodeclaimdisruption.Controller
	PodEvents  *podevents.Controller
	Expiration *expiration.Controller
	nodes      *informer.NodeController
	nodeClaims *informer.NodeClaimController
	pods       *informer.PodController
	seen       map[string]bool // NodeClaim names ever synced (a deleted one is synced away)
	seenNodes  map[string]bool
}

// newLoop wires the controllers on the harness's cluster state and provisioner, with the fake
// clock set to start.
func newLoop(h *Harness, start time.Time) *Loop {
	clk := h.AWS.Clock
	clk.SetTime(start)
	clusterCost := cost.NewClusterCost(h.Ctx, h.Cloud, h.Client)
	queue := disruption.NewQueue(h.Client, h.Recorder, h.Cluster, clk, h.Prov)
	l := &Loop{
		h: h, Clock: clk, Queue: queue,
		Controller: disruption.NewController(h.Ctx, clk, h.Client, h.Prov, h.Cloud, h.Recorder, h.Cluster, queue, clusterCost),
		Claims:     nodeclaimdisruption.NewController(clk, h.Client, h.Cloud),
		PodEvents:  podevents.NewController(clk, h.Client, h.Cloud),
		Expiration: expiration.NewController(clk, h.Client, h.Cloud),
		nodes:      informer.NewNodeController(h.Client, h.Cluster),
		nodeClaims: informer.NewNodeClaimController(h.Client, h.Cloud, h.Cluster, clusterCost),
		pods:       informer.NewPodController(h.Client, h.Cluster),
		seen:       map[string]bool{}, seenNodes: map[string]bool{},
	}
	h.Cluster.MarkUnconsolidated()
	return l
}

// Sync feeds the cluster state from the API server through Karpenter's informer controllers
// (what the running controller's watches do), deleted objects included.
func (l *Loop) Sync() error {
	ctx := l.h.Ctx
	claims := &karpv1.NodeClaimList{}
	nodes := &corev1.NodeList{}
	pods := &corev1.PodList{}
	for _, list := range []client.ObjectList{claims, nodes, pods} {
		if err := l.h.Client.List(ctx, list); err != nil {
			return err
		}
	}
	for _, c := range claims.Items {
		l.seen[c.Name] = true
	}
	for _, n := range nodes.Items {
		l.seenNodes[n.Name] = true
	}
	for name := range l.seen {
		if _, err := l.nodeClaims.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			return fmt.Errorf("state: NodeClaim %s: %w", name, err)
		}
	}
	for name := range l.seenNodes {
		if _, err := l.nodes.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			return fmt.Errorf("state: Node %s: %w", name, err)
		}
	}
	for _, p := range pods.Items {
		if _, err := l.pods.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)}); err != nil {
			return fmt.Errorf("state: Pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// Initialize marks a launched node Ready and initialized at the fake clock's time, as the
// kubelet and the node lifecycle controller would (pkg/controllers/nodeclaim/lifecycle/
// initialization.go; upstream ExpectMakeNodeClaimsInitialized / ExpectMakeNodesInitialized).
// Consolidatable is left to the nodeclaim disruption controller.
func (l *Loop) Initialize(claimName string) error {
	ctx := l.h.Ctx
	claim := &karpv1.NodeClaim{}
	if err := l.h.Client.Get(ctx, types.NamespacedName{Name: claimName}, claim); err != nil {
		return err
	}
	node := &corev1.Node{}
	if err := l.h.Client.Get(ctx, types.NamespacedName{Name: claim.Status.NodeName}, node); err != nil {
		return err
	}
	now := metav1.NewTime(l.Clock.Now())
	node.Labels[karpv1.NodeInitializedLabelKey] = "true"
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletReady"}}
	if err := applyWithStatus(ctx, l.h.Client, node); err != nil {
		return err
	}
	claim.StatusConditions(opstatus.WithClock(l.Clock)).SetTrue(karpv1.ConditionTypeInitialized)
	if err := applyWithStatus(ctx, l.h.Client, claim); err != nil {
		return err
	}
	return l.completeInstance(claim)
}

// completeInstance gives the fake EC2 instance what DescribeInstances reports for a real one
// launched from Karpenter's launch template: the EC2NodeClass's security groups and a subnet of
// its zone (EC2 API Reference, Instance: SecurityGroups, SubnetId). The provider's fake
// CreateFleet stores neither (karpenter-provider-aws v1.15.0 pkg/fake/ec2api.go L132-207), and
// Karpenter's drift check compares both with the EC2NodeClass (pkg/cloudprovider/drift.go
// areSecurityGroupsDrifted, isSubnetDrifted): without them every node would be drifted at launch.
func (l *Loop) completeInstance(claim *karpv1.NodeClaim) error {
	id := claim.Status.ProviderID[strings.LastIndex(claim.Status.ProviderID, "/")+1:]
	v, ok := l.h.AWS.EC2API.Instances.Load(id)
	if !ok {
		return fmt.Errorf("NodeClaim %s: the fake EC2 has no instance %s", claim.Name, id)
	}
	inst := v.(ec2types.Instance)
	nc := &awsv1.EC2NodeClass{}
	if err := l.h.Client.Get(l.h.Ctx, types.NamespacedName{Name: claim.Spec.NodeClassRef.Name}, nc); err != nil {
		return err
	}
	inst.SecurityGroups = lo.Map(nc.Status.SecurityGroups, func(sg awsv1.SecurityGroup, _ int) ec2types.GroupIdentifier {
		return ec2types.GroupIdentifier{GroupId: aws.String(sg.ID), GroupName: aws.String(sg.Name)}
	})
	zone := claim.Labels[corev1.LabelTopologyZone]
	if s, ok := lo.Find(nc.Status.Subnets, func(s awsv1.Subnet) bool { return s.Zone == zone }); ok {
		inst.SubnetId = aws.String(s.ID)
	}
	l.h.AWS.EC2API.Instances.Store(id, inst)
	l.h.AWS.InstanceCache.Flush()
	return nil
}

// Finish: the pod's work is done (phase Succeeded), the pod events controller records the event
// on its NodeClaim (lastPodEventTime: podevents/controller.go Register, a pod gone terminal).
func (l *Loop) Finish(p *corev1.Pod) error {
	ctx := l.h.Ctx
	current := &corev1.Pod{}
	if err := l.h.Client.Get(ctx, client.ObjectKeyFromObject(p), current); err != nil {
		return err
	}
	current.Status.Phase = corev1.PodSucceeded
	if err := l.h.Client.Status().Update(ctx, current); err != nil {
		return err
	}
	if _, err := l.PodEvents.Reconcile(ctx, current); err != nil {
		return fmt.Errorf("podevents: %w", err)
	}
	return nil
}

// Run marks the pod Running on its node and records the pod event.
func (l *Loop) Run(p *corev1.Pod) error {
	ctx := l.h.Ctx
	current := &corev1.Pod{}
	if err := l.h.Client.Get(ctx, client.ObjectKeyFromObject(p), current); err != nil {
		return err
	}
	current.Status.Phase = corev1.PodRunning
	current.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := l.h.Client.Status().Update(ctx, current); err != nil {
		return err
	}
	if _, err := l.PodEvents.Reconcile(ctx, current); err != nil {
		return fmt.Errorf("podevents: %w", err)
	}
	return nil
}

// MarkClaims runs the nodeclaim disruption controller (Consolidatable, Drifted) on every
// NodeClaim, then syncs the state.
func (l *Loop) MarkClaims() error {
	claims := &karpv1.NodeClaimList{}
	if err := l.h.Client.List(l.h.Ctx, claims); err != nil {
		return err
	}
	for i := range claims.Items {
		if _, err := l.Claims.Reconcile(l.h.Ctx, &claims.Items[i]); err != nil {
			return fmt.Errorf("nodeclaim disruption controller, NodeClaim %s: %w", claims.Items[i].Name, err)
		}
	}
	return l.Sync()
}

// Disrupt runs one pass of the disruption controller (the singleton's Reconcile) and returns the
// commands it started. While a validator waits on the fake clock, the clock is stepped by the
// wait (upstream ExpectToWait; validation.go Validate).
func (l *Loop) Disrupt() ([]*disruption.Command, error) {
	if err := l.Sync(); err != nil {
		return nil, err
	}
	if !l.h.Cluster.Synced(l.h.Ctx) {
		return nil, fmt.Errorf("Karpenter's cluster state is not synced with the API server: the disruption controller would wait")
	}
	before := map[*disruption.Command]bool{}
	for _, c := range l.Queue.GetCommands() {
		before[c] = true
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Controller.Reconcile(l.h.Ctx)
		done <- err
	}()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case err := <-done:
			if err != nil {
				return nil, fmt.Errorf("disruption controller: %w", err)
			}
			var started []*disruption.Command
			for _, c := range l.Queue.GetCommands() {
				if !before[c] {
					started = append(started, c)
				}
			}
			return started, l.Sync()
		case <-deadline:
			return nil, fmt.Errorf("disruption controller: no result after 2 minutes of real time")
		case <-time.After(5 * time.Millisecond):
			if l.Clock.HasWaiters() {
				l.Clock.Step(validationWait)
			}
		}
	}
}

// validationWait: the validators' commandValidationDelay (karpenter v1.15.0
// pkg/controllers/disruption/consolidation.go L45), stepped at once.
const validationWait = 15 * time.Second

// LaunchReplacements launches each replacement NodeClaim of the command through the cloud
// provider and registers its node (upstream suite_test.go ExpectMakeNewNodeClaimsReady, first
// half: ExpectNodeClaimDeployedAndStateUpdated); until then the cluster state is not synced and
// the disruption controller waits.
func (l *Loop) LaunchReplacements(cmd *disruption.Command) error {
	for _, r := range cmd.Replacements {
		claim := &karpv1.NodeClaim{}
		if err := l.h.Client.Get(l.h.Ctx, types.NamespacedName{Name: r.Name}, claim); err != nil {
			return fmt.Errorf("replacement %s: %w", r.Name, err)
		}
		if claim.Status.ProviderID != "" {
			continue
		}
		if _, err := l.h.launch(claim); err != nil {
			return fmt.Errorf("replacement %s: cloudProvider.Create: %w", r.Name, err)
		}
	}
	return l.Sync()
}

// InitializeReplacements: the second half (ExpectMakeNodeClaimsInitialized,
// ExpectMakeNodesInitialized).
func (l *Loop) InitializeReplacements(cmd *disruption.Command) error {
	for _, r := range cmd.Replacements {
		if err := l.Initialize(r.Name); err != nil {
			return err
		}
	}
	return l.Sync()
}

// Execute runs the orchestration queue on the command's candidates (waitOrTerminate: once the
// replacements are initialized, the candidates' NodeClaims are deleted) and returns the names of
// the NodeClaims it deleted.
func (l *Loop) Execute(cmd *disruption.Command) ([]string, error) {
	if len(cmd.Candidates) == 0 {
		return nil, nil
	}
	if _, err := l.Queue.Reconcile(l.h.Ctx, cmd.Candidates[0].NodeClaim); err != nil {
		return nil, fmt.Errorf("orchestration queue: %w", err)
	}
	var deleted []string
	for _, c := range cmd.Candidates {
		if gone, err := l.deleted(c.NodeClaim.Name); err != nil {
			return nil, err
		} else if gone {
			deleted = append(deleted, c.NodeClaim.Name)
		}
	}
	return deleted, l.Sync()
}

// deleted: the NodeClaim is gone or has a deletion timestamp (termination, which would drain the
// node within its terminationGracePeriod, is not run).
func (l *Loop) deleted(name string) (bool, error) {
	claim := &karpv1.NodeClaim{}
	err := l.h.Client.Get(l.h.Ctx, types.NamespacedName{Name: name}, claim)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !claim.DeletionTimestamp.IsZero(), nil
}

// claimsOf lists the NodeClaims of a NodePool that are not being deleted.
func (l *Loop) claimsOf(nodePool string) ([]karpv1.NodeClaim, error) {
	claims := &karpv1.NodeClaimList{}
	if err := l.h.Client.List(l.h.Ctx, claims, client.MatchingLabels{karpv1.NodePoolLabelKey: nodePool}); err != nil {
		return nil, err
	}
	var out []karpv1.NodeClaim
	for _, c := range claims.Items {
		if c.DeletionTimestamp.IsZero() {
			out = append(out, c)
		}
	}
	return out, nil
}

// condition: the NodeClaim's condition status (Unknown when absent).
func (l *Loop) condition(name, cond string) (metav1.ConditionStatus, string, error) {
	claim := &karpv1.NodeClaim{}
	if err := l.h.Client.Get(l.h.Ctx, types.NamespacedName{Name: name}, claim); err != nil {
		return "", "", err
	}
	c := claim.StatusConditions().Get(cond)
	if c == nil {
		return metav1.ConditionUnknown, "", nil
	}
	return c.Status, c.Reason, nil
}
