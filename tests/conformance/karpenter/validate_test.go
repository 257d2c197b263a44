package karpenter

// The post-deploy validation (issue 24, `python -m eks_gpu_platform.validate`, components/validate/)
// run as a subprocess against this package's real kube-apiserver v1.36.3, after the suite applied
// exactly what the render applies (every manifests/ document, server-side applied as unstructured
// objects in the apiserver package's order), with the real Karpenter AWS provider's nodeclass
// controller and the real NodePool validation and readiness controllers writing the
// EC2NodeClasses' and NodePools' status (Harness.Reconcile, against the provider's fakes seeded
// from the render): status.amis and AMIsReady come from karpenter-provider-aws v1.15.0
// pkg/controllers/nodeclass/ami.go L51-96 (the render's aliases resolved through the fake SSM
// parameters the harness publishes), Ready from the nodeclass controller's status conditions
// (pkg/controllers/nodeclass/controller.go), NodePool Ready from karpenter v1.15.0
// pkg/controllers/nodepool/readiness and validation.
//
// What the suite cannot run and writes itself, as the real controller would: the Helm releases'
// controller workloads (the suite has no Helm, no kubelet and no kube-controller-manager), created
// as the charts name them with the status the Deployment and DaemonSet controllers write (see
// seedWorkloads); and the namespace controller's last step (finalizeNamespaces).

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"eks-gpu-platform.local/conformance/apiserver"
	"eks-gpu-platform.local/conformance/internal/render"
)

// EnvPython names the interpreter that runs the CLI (make conformance sets it to the repository's
// .venv/bin/python, where `pip install -e .` put eks_gpu_platform); default that path.
const EnvPython = "CONFORMANCE_PYTHON"

// The label every object of a validation run carries (components/validate/core.py
// MANAGED_BY_LABEL, MANAGED_BY_VALUE): written here, not imported, so a rename there fails here.
const validateSelector = "app.kubernetes.io/managed-by=eks-gpu-platform-validate"

// renderManager owns the render's objects, as Pulumi's server-side apply would.
const renderManager = "conformance-validate"

// workload is a controller workload of a Helm release, by kind, namespace and name.
type workload struct{ Kind, Namespace, Name string }

// chartWorkloads are the controller workloads each stack's Helm releases (build/<stack>/helm/)
// deploy, named as the pinned charts name them, written out here independently of
// components/validate/controllers.py expected_controllers (a wrong name there fails
// controllers-ready here):
//   - karpenter (release karpenter in kube-system): Deployment karpenter, the chart's
//     karpenter.fullname (aws/karpenter-provider-aws v1.15.1 charts/karpenter/templates/
//     deployment.yaml, _helpers.tpl fullname).
//   - kai-scheduler (release kai-scheduler in kai-scheduler): the operator Deployment kai-operator
//     (kai-scheduler v0.17.0 deployments/kai-scheduler/templates/services/operator.yaml) and the
//     operands it deploys into its namespace: pod-grouper, binder, queue-controller,
//     podgroup-controller, node-scale-adjuster (the render sets global.clusterAutoscaling),
//     admission (pkg/operator/operands/*/resources.go) and the default shard's scheduler
//     kai-scheduler-default (pkg/operator/operands/scheduler/resources_for_shard.go).
//   - gpu-operator (release gpu-operator in gpu-operator): Deployment gpu-operator (NVIDIA/
//     gpu-operator v26.7.0 deployments/gpu-operator/templates/operator.yaml) and the
//     node-feature-discovery subchart's master and gc Deployments and worker DaemonSet, named
//     <release>-node-feature-discovery-<part> (charts/node-feature-discovery/templates/
//     master.yaml, nfd-gc.yaml, worker.yaml).
//   - aws-efa-k8s-device-plugin (prod only, release of that name in kube-system): its DaemonSet
//     aws-efa-k8s-device-plugin (aws/eks-charts stable/aws-efa-k8s-device-plugin chart v0.5.30
//     templates/daemonset.yaml).
var chartWorkloads = func() map[string][]workload {
	common := []workload{
		{"Deployment", "kube-system", "karpenter"},
		{"Deployment", "kai-scheduler", "kai-operator"},
		{"Deployment", "kai-scheduler", "pod-grouper"},
		{"Deployment", "kai-scheduler", "binder"},
		{"Deployment", "kai-scheduler", "queue-controller"},
		{"Deployment", "kai-scheduler", "podgroup-controller"},
		{"Deployment", "kai-scheduler", "node-scale-adjuster"},
		{"Deployment", "kai-scheduler", "admission"},
		{"Deployment", "kai-scheduler", "kai-scheduler-default"},
		{"Deployment", "gpu-operator", "gpu-operator"},
		{"Deployment", "gpu-operator", "gpu-operator-node-feature-discovery-master"},
		{"Deployment", "gpu-operator", "gpu-operator-node-feature-discovery-gc"},
		{"DaemonSet", "gpu-operator", "gpu-operator-node-feature-discovery-worker"},
	}
	prod := append(append([]workload{}, common...), workload{"DaemonSet", "kube-system", "aws-efa-k8s-device-plugin"})
	return map[string][]workload{"dev": common, "dev-1.35": common, "prod": prod}
}()

// extraCRDs are the CRDs of apiserver.CRDSources this package's environment does not install
// (it installs Karpenter's own, apiserver.KarpenterCRDs): KAI's Queue and PodGroup and the MPIJob,
// which the render's objects and the scheduling phase use.
func extraCRDs() envtest.CRDInstallOptions {
	var sources []apiserver.CRDSource
	for _, src := range apiserver.CRDSources {
		if src.Name != apiserver.KarpenterCRDs.Name {
			sources = append(sources, src)
		}
	}
	return apiserver.CRDInstallOptions(repoDir, sources)
}

// deployed is one stack as `pulumi up` leaves it, on the suite's API server.
type deployed struct {
	H       *Harness
	Stack   string
	applied []*unstructured.Unstructured
	seeded  []client.Object
}

// deploy applies stack's render and seeds its controllers; t.Cleanup removes them again.
func deploy(t *testing.T, stack string) *deployed {
	t.Helper()
	requireSetup(t)
	dir, stacks, err := render.Renders()
	if err != nil {
		t.Fatalf("renders: %v", err)
	}
	found := false
	for _, s := range stacks {
		found = found || s == stack
	}
	if !found {
		t.Fatalf("renders: no stack %s in %s (has %s)", stack, dir, strings.Join(stacks, ", "))
	}
	return deployRender(t, stack, filepath.Join(dir, stack))
}

// deployRender is deploy of the render in dir (a known-bad copy of stack's render, say).
func deployRender(t *testing.T, stack, dir string) *deployed {
	t.Helper()
	requireSetup(t)
	r, err := LoadRender(stack, dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewBareHarness(r, instanceData)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(coreEnv.Config, extraCRDs()); err != nil {
		t.Fatalf("installing %v: %v", extraCRDs().Paths, err)
	}
	d := &deployed{H: h, Stack: stack}
	t.Cleanup(func() { d.remove(t) })
	for _, doc := range apiserver.Ordered(r.Manifests) {
		obj := doc.Object.DeepCopy()
		if err := h.Client.Patch(h.Ctx, obj, client.Apply, client.FieldOwner(renderManager), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s: %v", doc, err)
		}
		d.applied = append(d.applied, obj)
		switch obj.GetKind() {
		case "EC2NodeClass":
			h.NodeClasses[obj.GetName()] = nil
		case "NodePool":
			h.NodePools[obj.GetName()] = nil
		}
	}
	workloads, ok := chartWorkloads[stack]
	if !ok {
		t.Fatalf("chartWorkloads has no stack %s", stack)
	}
	for _, w := range workloads {
		obj, err := seedWorkload(h.Ctx, h.Client, w)
		if err != nil {
			t.Fatal(err)
		}
		d.seeded = append(d.seeded, obj)
	}
	if err := h.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if errs := h.NotReady(); len(errs) > 0 {
		t.Fatalf("%s: not Ready after the controllers reconciled: %v", stack, errors.Join(errs...))
	}
	return d
}

// remove deletes what deploy applied and seeded (and systemPods created) except namespaces
// (envtest runs no namespace controller) and the CRDs, then the Karpenter objects' finalizers
// (cleanAPIServer). Seeded objects go last first, with grace period 0: no kubelet ends a bound
// pod's graceful deletion (kubernetes v1.36.3 pkg/registry/core/pod/strategy.go
// CheckGracefulDelete keeps a scheduled pod's grace period), and no other kind here has one.
func (d *deployed) remove(t *testing.T) {
	ctx := context.Background()
	c := d.H.Client
	for i := len(d.seeded) - 1; i >= 0; i-- {
		if err := c.Delete(ctx, d.seeded[i], client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	}
	for i := len(d.applied) - 1; i >= 0; i-- {
		obj := d.applied[i]
		if obj.GetKind() == "Namespace" {
			continue
		}
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	if err := cleanAPIServer(ctx, c); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

// systemPods creates the realistic node's system pods (tests/fixtures/system-pods,
// apiserver.LoadFixtures) for real through the admission policies d's render applied, once the API
// server acts on them (apiserver.PoliciesActive), with what admission needs for them
// (apiserver.CreateSystemPods: namespaces, the RuntimeClass nvidia, the ServiceAccounts they
// name); remove deletes them. It returns the pods as stored, by namespace/name.
func (d *deployed) systemPods(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	fx, err := apiserver.LoadFixtures(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := apiserver.NewEnv(repoDir, coreEnv.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.PoliciesActive(d.H.Ctx, d.H.Render.Render, fx); err != nil {
		t.Fatalf("%s: %v", d.Stack, err)
	}
	created, err := e.CreateSystemPods(d.H.Ctx, fx)
	pods := map[string]*unstructured.Unstructured{}
	for _, obj := range created {
		d.seeded = append(d.seeded, obj)
		if obj.GetKind() == "Pod" {
			pods[obj.GetNamespace()+"/"+obj.GetName()] = obj
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", d.Stack, err)
	}
	return pods
}

// expectPodsKept fails unless every pod of pods is still in the API server and not being
// deleted: a run deletes only what it created.
func expectPodsKept(t *testing.T, d *deployed, pods map[string]*unstructured.Unstructured) {
	t.Helper()
	for _, key := range sortedKeys(pods) {
		live := &corev1.Pod{}
		err := d.H.Client.Get(d.H.Ctx, types.NamespacedName{Namespace: pods[key].GetNamespace(), Name: pods[key].GetName()}, live)
		switch {
		case err != nil:
			t.Errorf("system pod %s after the run: %v", key, err)
		case live.DeletionTimestamp != nil:
			t.Errorf("system pod %s deleted by the run", key)
		}
	}
}

// seedWorkload creates w as its chart would (one replica, a selector and pod template labelled
// with the app name) and writes the status its controller writes once the rollout is complete:
//   - Deployment: kubernetes v1.36.3 pkg/controller/deployment/sync.go calculateStatus L494-533
//     (observedGeneration, replicas, updated, ready, available; Available=True
//     MinimumReplicasAvailable) and progress.go L36-60 (Progressing=True NewReplicaSetAvailable,
//     pkg/controller/deployment/util/deployment_util.go L83).
//   - DaemonSet: pkg/controller/daemon/daemon_controller.go updateDaemonSetStatus L1199-1240 and
//     storeDaemonSetStatus L1143-1190, for one node that should run the pod and runs it ready.
func seedWorkload(ctx context.Context, c client.Client, w workload) (client.Object, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("namespace %s: %w", w.Namespace, err)
	}
	labels := map[string]string{"app.kubernetes.io/name": w.Name}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: "registry.invalid/" + w.Name + ":conformance"}}},
	}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	meta := metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	now := metav1.Now()
	switch w.Kind {
	case "Deployment":
		one := int32(1)
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: selector, Template: template}}
		if err := c.Create(ctx, d); err != nil {
			return nil, fmt.Errorf("Deployment %s: %w", key, err)
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
					Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
					Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", w.Name+"-conformance"), LastUpdateTime: now, LastTransitionTime: now},
			},
		}
		if err := c.Status().Update(ctx, d); err != nil {
			return nil, fmt.Errorf("Deployment %s status: %w", key, err)
		}
		return d, nil
	case "DaemonSet":
		ds := &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template}}
		if err := c.Create(ctx, ds); err != nil {
			return nil, fmt.Errorf("DaemonSet %s: %w", key, err)
		}
		ds.Status = appsv1.DaemonSetStatus{
			ObservedGeneration: ds.Generation, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1,
			NumberReady: 1, UpdatedNumberScheduled: 1, NumberAvailable: 1,
		}
		if err := c.Status().Update(ctx, ds); err != nil {
			return nil, fmt.Errorf("DaemonSet %s status: %w", key, err)
		}
		return ds, nil
	}
	return nil, fmt.Errorf("workload %v: unknown kind", w)
}

// ---- running the CLI ----

// cliRun is one run of the CLI: its exit code, output and reports.
type cliRun struct {
	Code   int
	Output string
	MD     string
	XML    junitSuites
}

type junitSuites struct {
	Suites []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// status of phase/check in the JUnit report: pass, fail or skip (and the reason), "" if absent.
func (j junitSuites) status(phase, check string) (string, string, []string) {
	for _, s := range j.Suites {
		if s.Name != phase {
			continue
		}
		for _, c := range s.Cases {
			if c.Name != check {
				continue
			}
			out := strings.Split(strings.TrimSpace(c.SystemOut), "\n")
			switch {
			case c.Failure != nil:
				return "fail", c.Failure.Message, out
			case c.Skipped != nil:
				return "skip", c.Skipped.Message, out
			}
			return "pass", "", out
		}
	}
	return "", "", nil
}

func python() string {
	if p := os.Getenv(EnvPython); p != "" {
		return p
	}
	return filepath.Join(repoDir, ".venv", "bin", "python")
}

// adminKubeconfig writes a kubeconfig for a user of group system:masters (envtest's AddUser:
// a client certificate signed by the API server's client CA).
func adminKubeconfig(t *testing.T) string {
	t.Helper()
	user, err := coreEnv.AddUser(envtest.User{Name: "validate-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// validate runs `python -m eks_gpu_platform.validate` on d's render and API server.
func (d *deployed) validate(t *testing.T, runID string, args ...string) cliRun {
	t.Helper()
	reports := t.TempDir()
	argv := append([]string{"-m", "eks_gpu_platform.validate", "--stack", d.Stack, "--render", d.H.Render.Dir,
		"--kubeconfig", adminKubeconfig(t), "--report-dir", reports, "--run-id", runID}, args...)
	cmd := exec.Command(python(), argv...)
	cmd.Dir = repoDir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	run := cliRun{Output: string(out)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.Code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v (%s names the Python with eks_gpu_platform installed; make venv makes "+
			"the default .venv/bin/python)", python(), strings.Join(argv, " "), err, EnvPython)
	}
	t.Logf("validate %s (%s): exit %d\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), run.Code, out)
	defer func() { t.Logf("validate.md:\n%s", run.MD) }()
	md, err := os.ReadFile(filepath.Join(reports, "validate.md"))
	if err != nil {
		t.Fatalf("no validate.md (exit %d): %v\n%s", run.Code, err, out)
	}
	run.MD = string(md)
	raw, err := os.ReadFile(filepath.Join(reports, "validate.xml"))
	if err != nil {
		t.Fatalf("no validate.xml: %v", err)
	}
	if err := xml.Unmarshal(raw, &run.XML); err != nil {
		t.Fatalf("validate.xml: %v", err)
	}
	return run
}

// expectLines fails unless every line of want is a line of the markdown report.
func expectLines(t *testing.T, run cliRun, want ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(run.MD, "\n") {
		have[l] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("validate.md has no line %q:\n%s", w, run.MD)
		}
	}
}

// expectCase fails unless phase/check has status (and, for a failure, reason and detail lines).
func expectCase(t *testing.T, run cliRun, phase, check, status, reason string, details ...string) {
	t.Helper()
	got, why, out := run.XML.status(phase, check)
	if got != status || (reason != "" && why != reason) {
		t.Errorf("validate.xml %s/%s: %s %q, want %s %q", phase, check, got, why, status, reason)
	}
	have := map[string]bool{}
	for _, l := range out {
		have[l] = true
	}
	for _, d := range details {
		if !have[d] {
			t.Errorf("validate.xml %s/%s system-out has no line %q: %q", phase, check, d, out)
		}
	}
}

// ---- leftovers ----

// labelled lists every object of every listable resource the API server serves that carries the
// validation's managed-by label, as "Kind namespace/name".
func labelled(t *testing.T) ([]string, []string) {
	t.Helper()
	cfg := rest.CopyConfig(coreEnv.Config)
	cfg.WarningHandler = rest.NoWarnings{} // listing every kind warns of the deprecated ones
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	var objects, terminating []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(context.Background(), metav1.ListOptions{LabelSelector: validateSelector})
			if err != nil {
				t.Fatalf("list %s %s: %v", list.GroupVersion, r.Name, err)
			}
			for _, o := range items.Items {
				ref := fmt.Sprintf("%s %s", r.Kind, o.GetName())
				if o.GetNamespace() != "" {
					ref = fmt.Sprintf("%s %s/%s", r.Kind, o.GetNamespace(), o.GetName())
				}
				if r.Kind == "Namespace" && o.GetDeletionTimestamp() != nil {
					terminating = append(terminating, o.GetName())
					continue
				}
				objects = append(objects, ref)
			}
		}
	}
	sort.Strings(objects)
	sort.Strings(terminating)
	return objects, terminating
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// expectNoLeftovers: after a run the label selects nothing but the run's namespaces, deleted and
// Terminating (envtest runs no namespace controller, which would empty and then finalize them:
// kubernetes v1.36.3 pkg/controller/namespace/deletion/namespaced_resources_deleter.go Delete);
// their content was already found empty above (every listable resource was listed), so the test
// finalizes them as that controller's last step does (the namespaces/finalize subresource), and
// then the label must select nothing at all.
func expectNoLeftovers(t *testing.T) {
	t.Helper()
	objects, terminating := labelled(t)
	if len(objects) > 0 {
		t.Errorf("labelled %s left behind: %s", validateSelector, strings.Join(objects, ", "))
	}
	ctx := context.Background()
	for _, name := range terminating {
		ns, err := coreEnv.KubernetesInterface.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ns.Spec.Finalizers = nil
		if _, err := coreEnv.KubernetesInterface.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("finalize namespace %s: %v", name, err)
		}
	}
	if err := apiserver.Poll(ctx, 10*time.Second, func() error {
		objects, terminating := labelled(t)
		if all := append(objects, terminating...); len(all) > 0 {
			return fmt.Errorf("labelled %s still present: %s", validateSelector, strings.Join(all, ", "))
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// ---- the tests ----

// deploymentPasses are the deployment phase's checks on a stack as deployed (components/validate/
// deployment.py), each of which must pass.
func deploymentChecks(d *deployed) []string {
	out := []string{"controllers-ready", "crds-served"}
	seen := map[string]bool{}
	for _, doc := range d.H.Render.Manifests {
		if k := doc.Object.GetKind(); !seen[k] {
			seen[k] = true
			out = append(out, "objects-match-render/"+k)
		}
	}
	return append(out, "ec2nodeclasses-ready", "nodepools-ready")
}

// Issue 24, "Done when": the deployment phase passes for dev and prod against the objects the
// render applies, the controllers the phase expects Available and the EC2NodeClasses and
// NodePools made Ready (status.amis resolved) by the real Karpenter controllers.
func TestValidateDeploymentPasses(t *testing.T) {
	for _, stack := range []string{"dev", "prod"} {
		t.Run(stack, func(t *testing.T) {
			d := deploy(t, stack)
			run := d.validate(t, "vconf-"+stack, "--phases", "deployment")
			if run.Code != 0 {
				t.Fatalf("exit %d, want 0:\n%s\n%s", run.Code, run.Output, run.MD)
			}
			checks := deploymentChecks(d)
			for _, c := range checks {
				expectCase(t, run, "deployment", c, "pass", "")
			}
			workloads := chartWorkloads[stack]
			nodeClasses := len(d.H.NodeClasses)
			nodePools := len(d.H.NodePools)
			expectLines(t, run,
				fmt.Sprintf("| controllers-ready | pass | %d workloads ready |", len(workloads)),
				fmt.Sprintf("| ec2nodeclasses-ready | pass | %d EC2NodeClass objects Ready |", nodeClasses),
				fmt.Sprintf("| nodepools-ready | pass | %d NodePool objects Ready |", nodePools),
				"| cleanup | pass | deleted 1 objects |",
			)
			expectNoLeftovers(t)
		})
	}
}

// A rendered object missing from the cluster fails the run (exit 1) with the exact line.
func TestValidateDeploymentMissingNodePool(t *testing.T) {
	d := deploy(t, "dev")
	np := &unstructured.Unstructured{}
	np.SetAPIVersion("karpenter.sh/v1")
	np.SetKind("NodePool")
	np.SetName("gpu-spot")
	if err := d.H.Client.Delete(d.H.Ctx, np); err != nil {
		t.Fatal(err)
	}
	// The NodePool's finalizer (karpenter.sh/termination) is the termination controller's, which
	// the suite does not run: remove it as that controller does once no NodeClaim is left.
	if err := apiserver.Poll(d.H.Ctx, 10*time.Second, func() error {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(np.GroupVersionKind())
		err := d.H.Client.Get(d.H.Ctx, types.NamespacedName{Name: "gpu-spot"}, live)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return d.H.Client.Patch(d.H.Ctx, live, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	}); err != nil {
		t.Fatal(err)
	}
	run := d.validate(t, "vconf-missing", "--phases", "deployment", "--time-cap-minutes", "0.1")
	if run.Code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", run.Code, run.Output)
	}
	expectCase(t, run, "deployment", "objects-match-render/NodePool", "fail",
		"1 of 4 NodePool objects differ from the render", "NodePool gpu-spot: missing from the cluster")
	expectCase(t, run, "deployment", "nodepools-ready", "fail", "", "NodePool gpu-spot: missing from the cluster")
	expectCase(t, run, "deployment", "objects-match-render/Queue", "pass", "")
	expectLines(t, run,
		"| objects-match-render/NodePool | fail | 1 of 4 NodePool objects differ from the render |",
		"    NodePool gpu-spot: missing from the cluster",
	)
	expectNoLeftovers(t)
}

// A rendered object changed in the cluster fails the run with one line per drifted field: a
// NodePool's GPU limit and a Queue's GPU quota, each edited as an operator's kubectl edit would.
func TestValidateDeploymentChanged(t *testing.T) {
	d := deploy(t, "dev")
	edit := func(apiVersion, kind, name, patch string) {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(apiVersion)
		obj.SetKind(kind)
		obj.SetName(name)
		if err := d.H.Client.Patch(d.H.Ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatalf("edit %s %s: %v", kind, name, err)
		}
	}
	// build/conformance/renders/dev/manifests: nodepool-gpu-spot.yaml limits nvidia.com/gpu '6';
	// queue-research-serving.yaml spec.resources.gpu.quota 4.
	edit("karpenter.sh/v1", "NodePool", "gpu-spot", `{"spec":{"limits":{"nvidia.com/gpu":"7"}}}`)
	edit("scheduling.run.ai/v2", "Queue", "research-serving", `{"spec":{"resources":{"gpu":{"quota":5}}}}`)
	run := d.validate(t, "vconf-changed", "--phases", "deployment", "--time-cap-minutes", "0.1")
	if run.Code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", run.Code, run.Output)
	}
	nodePoolLine := `NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered "6", live "7"`
	queueLine := "Queue research-serving: spec.resources.gpu.quota: rendered 4, live 5"
	expectCase(t, run, "deployment", "objects-match-render/NodePool", "fail",
		"1 of 4 NodePool objects differ from the render", nodePoolLine)
	expectCase(t, run, "deployment", "objects-match-render/Queue", "fail",
		"1 of 4 Queue objects differ from the render", queueLine)
	expectCase(t, run, "deployment", "nodepools-ready", "pass", "")
	expectLines(t, run, "    "+nodePoolLine, "    "+queueLine)
	expectNoLeftovers(t)
}

// admissionChecks selects the checks of the scheduling and security phases that need neither KAI
// (its scheduler and webhooks are not in the suite) nor a GPU node: the do-not-disrupt policies,
// no system pod annotated, the tenant toleration policy and Pod Security per queue namespace.
var admissionChecks = []string{
	"--checks", "do-not-disrupt/*", "--checks", "system-pods-not-annotated",
	"--checks", "system-node-toleration-denied/*", "--checks", "pod-security/*",
}

// systemPodCount is the number of pods of tests/fixtures/system-pods: aws-node, coredns,
// efa-device-plugin, eks-pod-identity-agent, karpenter, kube-proxy and the static pod's mirror
// pod (one each), the GPU Operator's six operands and three Deployment pods, KAI's seven control
// plane pods and its GPU reservation pod.
const systemPodCount = 24

// reservationLine is the detail system-pods-not-annotated writes for KAI's GPU reservation pod
// (tests/fixtures/system-pods/kai-resource-reservation.yaml), which its binder annotates itself.
const reservationLine = "kai-resource-reservation/gpu-reservation-8eee7ebe67d00371: 'true', set by KAI's binder (a GPU reservation pod)"

// Issue 24 "Tested here": the admission checks pass on the real API server, for the 1.36 render
// (MutatingAdmissionPolicy) and the 1.35 one (ValidatingAdmissionPolicy), with a realistic node's
// system pods created through the render's policies first, so system-pods-not-annotated inspects
// them and passes (not a skip on nothing); the run leaves no labelled object behind and the
// system pods in place.
func TestValidateAdmissionChecks(t *testing.T) {
	for _, stack := range []string{"dev", render.Older} {
		t.Run(stack, func(t *testing.T) {
			d := deploy(t, stack)
			pods := d.systemPods(t)
			if len(pods) != systemPodCount {
				t.Fatalf("created %d system pods, want the %d of tests/fixtures/system-pods", len(pods), systemPodCount)
			}
			args := append([]string{"--phases", "scheduling,security"}, admissionChecks...)
			run := d.validate(t, "adm-"+strings.ReplaceAll(stack, ".", ""), args...)
			if run.Code != 0 {
				t.Fatalf("exit %d, want 0:\n%s\n%s", run.Code, run.Output, run.MD)
			}
			for _, q := range []string{"research-batch", "research-notebooks", "research-serving"} {
				expectCase(t, run, "scheduling", "do-not-disrupt/"+q, "pass", "")
				expectCase(t, run, "security", "system-node-toleration-denied/"+q, "pass", "")
			}
			expectCase(t, run, "scheduling", "system-pods-not-annotated", "pass", "", reservationLine)
			for _, ns := range []string{"research-batch", "research-notebooks", "research-serving"} {
				expectCase(t, run, "security", "pod-security/"+ns, "pass", "")
			}
			// The run namespace, a namespace per leaf queue and the run's ServiceAccount in each
			// (components/validate/workspace.py); every probe pod was a server-side dry run.
			expectLines(t, run, fmt.Sprintf("%s: 13 passed, 0 failed, 0 skipped", stack), "| cleanup | pass | deleted 7 objects |",
				"| system-pods-not-annotated | pass | 24 system, DaemonSet and mirror pods; none annotated by anything but its own controller |")
			expectNoLeftovers(t)
			expectPodsKept(t, d, pods)
		})
	}
}

// The known-bad admission-unscoped render (tests/conformance/mutate.py: the do-not-disrupt
// policies before issue 19's fix, keyed on priority alone in every namespace) deployed instead of
// dev's: the real API server annotates the system pods created through its
// MutatingAdmissionPolicy, and system-pods-not-annotated fails, one line per pod. Every pod but
// KAI's reservation pod matches: a priorityClassName with priority >= 100 (system-node-critical,
// system-cluster-critical), or, without one, the pod-template-hash label and a ReplicaSet owner
// (KAI's control plane); the reservation pod already carries the annotation (the not-annotated
// condition).
func TestValidateSystemPodsAnnotatedFails(t *testing.T) {
	bad, err := render.Bad()
	if err != nil {
		t.Fatal(err)
	}
	d := deployRender(t, "dev", filepath.Join(bad, "admission-unscoped", "dev"))
	pods := d.systemPods(t)
	// What admission did, read back from the API server: the evidence the CLI must report.
	for _, key := range []string{"kube-system/aws-node-7xk2p", "kube-system/kube-proxy-4mbq9"} {
		if got := pods[key].GetAnnotations()[apiserver.DoNotDisrupt]; got != "true" {
			t.Fatalf("system pod %s stored with %s %q: the known-bad policy did not act", key, apiserver.DoNotDisrupt, got)
		}
	}
	run := d.validate(t, "vconf-sysann", "--phases", "scheduling", "--checks", "system-pods-not-annotated")
	if run.Code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", run.Code, run.Output, run.MD)
	}
	reason := "23 of 24 system, DaemonSet and mirror pods carry karpenter.sh/do-not-disrupt from something " +
		"other than their own controller, so Karpenter never disrupts their nodes"
	lines := []string{
		"DaemonSet pod kube-system/aws-node-7xk2p carries karpenter.sh/do-not-disrupt: 'true'",
		"DaemonSet pod kube-system/kube-proxy-4mbq9 carries karpenter.sh/do-not-disrupt: 'true'",
		"DaemonSet pod gpu-operator/nvidia-device-plugin-daemonset-a9k0z carries karpenter.sh/do-not-disrupt: 'true'",
		"mirror pod kube-system/node-local-dns-ip-10-0-12-34.us-west-2.compute.internal carries karpenter.sh/do-not-disrupt: 'true'",
		"system pod kube-system/karpenter-5f8d6c9b7-x9d2k carries karpenter.sh/do-not-disrupt: 'true'",
		"system pod kai-scheduler/binder-66d8c7b9f4-k1x7q carries karpenter.sh/do-not-disrupt: 'true'",
		reservationLine,
	}
	expectCase(t, run, "scheduling", "system-pods-not-annotated", "fail", reason, lines...)
	// The preflight's leftovers and run-namespace checks and the clean-up of the run namespace pass.
	md := []string{"| system-pods-not-annotated | fail | " + reason + " |", "dev: 3 passed, 1 failed, 0 skipped",
		"| cleanup | pass | deleted 1 objects |"}
	for _, l := range lines {
		md = append(md, "    "+l)
	}
	expectLines(t, run, md...)
	expectNoLeftovers(t)
	expectPodsKept(t, d, pods)
}

// Clean-up on failure: a run whose check fails mid-phase (KAI's NVIDIA_VISIBLE_DEVICES block,
// whose webhook the suite does not run, after the run created its queue namespaces and
// ServiceAccounts) exits 1 and still leaves nothing labelled behind.
func TestValidateCleanupOnFailure(t *testing.T) {
	d := deploy(t, "dev")
	pods := d.systemPods(t)
	args := append([]string{"--phases", "scheduling,security", "--checks", "nvidia-visible-devices-blocked/*"}, admissionChecks...)
	run := d.validate(t, "vconf-fail", args...)
	if run.Code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", run.Code, run.Output)
	}
	expectCase(t, run, "security", "nvidia-visible-devices-blocked/research-serving", "fail", "")
	expectCase(t, run, "scheduling", "system-pods-not-annotated", "pass", "", reservationLine)
	expectCase(t, run, "cleanup", "cleanup", "pass", "")
	expectLines(t, run, "dev: 13 passed, 3 failed, 0 skipped", "| cleanup | pass | deleted 7 objects |")
	expectNoLeftovers(t)
	expectPodsKept(t, d, pods)
}

// A controller that has not rolled out fails controllers-ready: Karpenter's Deployment with its
// one replica unavailable, as the Deployment controller reports it (calculateStatus: available 0,
// Available=False MinimumReplicasUnavailable).
func TestValidateDeploymentControllerUnavailable(t *testing.T) {
	d := deploy(t, "dev")
	dep := &appsv1.Deployment{}
	if err := d.H.Client.Get(d.H.Ctx, types.NamespacedName{Namespace: "kube-system", Name: "karpenter"}, dep); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	dep.Status.ReadyReplicas, dep.Status.AvailableReplicas, dep.Status.UnavailableReplicas = 0, 0, 1
	dep.Status.Conditions[0] = appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
		Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability.", LastUpdateTime: now, LastTransitionTime: now}
	if err := d.H.Client.Status().Update(d.H.Ctx, dep); err != nil {
		t.Fatal(err)
	}
	run := d.validate(t, "vconf-unavail", "--phases", "deployment", "--time-cap-minutes", "0.1")
	if run.Code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", run.Code, run.Output)
	}
	line := "Deployment kube-system/karpenter (karpenter): 0 of 1 updated replicas available"
	expectCase(t, run, "deployment", "controllers-ready", "fail", "1 of 13 not ready", line)
	expectLines(t, run, "| controllers-ready | fail | 1 of 13 not ready |", "    "+line)
	expectNoLeftovers(t)
}
