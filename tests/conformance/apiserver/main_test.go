package apiserver

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"eks-gpu-platform.local/conformance/internal/render"
)

var env *Env

// TestMain starts one kube-apiserver v1.36.3 and etcd for the package (KUBEBUILDER_ASSETS).
func TestMain(m *testing.M) {
	repo, err := render.Repo()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
	start := time.Now()
	env, err = Start(repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
	fmt.Printf("apiserver: kube-apiserver and etcd up with the CRDs in %s\n", time.Since(start).Round(time.Millisecond))
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver: stop:", err)
	}
	os.Exit(code)
}

func loadRenders(t *testing.T) []*render.Render {
	t.Helper()
	root, stacks, err := render.Renders()
	if err != nil {
		t.Fatal(err)
	}
	var out []*render.Render
	for _, s := range stacks {
		r, err := render.Load(s, root+"/"+s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func fixtures(t *testing.T) *Fixtures {
	t.Helper()
	fx, err := LoadFixtures(env.Repo)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

func report(t *testing.T, problems []error) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// The suite judges with the version README pins (cluster.kubernetesVersion "1.36", within
// karpenter-provider-aws v1.15.0's MinK8sVersion 1.26 and MaxK8sVersion 1.37,
// pkg/providers/version/version.go L43-44): /version must say so, or the binaries were built
// without the version ldflags (make conformance-bins).
func TestServerVersion(t *testing.T) {
	v, err := env.Discover.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.36.3" || v.Major != "1" || v.Minor != "36" {
		t.Fatalf("kube-apiserver /version is %s (major %q, minor %q), want v1.36.3", v.GitVersion, v.Major, v.Minor)
	}
}

// The admission scenarios need MutatingAdmissionPolicy v1 (GA at 1.36), ValidatingAdmissionPolicy
// v1 and every CRD of apiserver.CRDSources served with envtest's default flags.
func TestServedAPIs(t *testing.T) {
	want := map[string][]string{
		"admissionregistration.k8s.io/v1": {"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
			"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
		"karpenter.sh/v1":            {"nodeclaims", "nodepools"},
		"karpenter.sh/v1alpha1":      {"nodeoverlays"},
		"karpenter.k8s.aws/v1":       {"ec2nodeclasses"},
		"scheduling.run.ai/v2":       {"queues"},
		"scheduling.run.ai/v2alpha2": {"podgroups"},
		"kubeflow.org/v2beta1":       {"mpijobs"},
	}
	groups := make([]string, 0, len(want))
	for g := range want {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, gv := range groups {
		list, err := env.Discover.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Errorf("%s: %v", gv, err)
			continue
		}
		served := map[string]bool{}
		for _, r := range list.APIResources {
			served[r.Name] = true
		}
		for _, r := range want[gv] {
			if !served[r] {
				t.Errorf("%s does not serve %s (serves %s)", gv, r, strings.Join(keys(served), ", "))
			}
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// README "Workload templates" and the stack's manifests: every rendered object is admitted by the
// real API server (schema, defaults, CEL, Pod Security, the render's own policies), per stack.
func TestEveryObjectIsAdmitted(t *testing.T) {
	fx := fixtures(t)
	for _, r := range loadRenders(t) {
		t.Run(r.Stack, func(t *testing.T) {
			defer env.Lock()()
			t.Logf("helm/ skipped: Helm values for the charts, not Kubernetes objects")
			report(t, AdmittedScenario(context.Background(), env, r, fx))
		})
	}
}

// README friction point "Non-preemptible pods and consolidation": the do-not-disrupt policies act
// on KAI's non-preemptible pods and their workloads only, never on a system pod or a ReplicaSet.
func TestAdmissionPolicies(t *testing.T) {
	fx := fixtures(t)
	for _, r := range loadRenders(t) {
		t.Run(r.Stack, func(t *testing.T) {
			defer env.Lock()()
			report(t, AdmissionScenario(context.Background(), env, r, fx))
		})
	}
}

// README "Workload templates", Pod Security: each queue namespace enforces the level its templates
// promise, and the templates are admitted at it.
func TestPodSecurity(t *testing.T) {
	for _, r := range loadRenders(t) {
		t.Run(r.Stack, func(t *testing.T) {
			defer env.Lock()()
			report(t, PodSecurityScenario(context.Background(), env, r))
		})
	}
}

// README "Tenancy": in every queue namespace the tenancy policies refuse another queue's label (on
// a pod and on a Deployment), GPUs outside KAI, NVIDIA_VISIBLE_DEVICES=all without a GPU,
// spec.nodeName, a non-preemptible class in a preemptible-only queue, an unlabelled Deployment
// there (KAI's inference default, judged on the Deployment) and another queue's pool, each with
// its exact message, and admit every shipped template's pod and every system pod, and there a
// Deployment labelled preemptible on the Deployment only or owned by a SeldonDeployment, and
// their pods (docs/kai-owners.md).
func TestTenancy(t *testing.T) {
	fx := fixtures(t)
	for _, r := range loadRenders(t) {
		if r.Stack != "dev" && r.Stack != "prod" && r.Stack != "dev-1.35" {
			continue
		}
		t.Run(r.Stack, func(t *testing.T) {
			defer env.Lock()()
			report(t, TenancyScenario(context.Background(), env, r, fx))
		})
	}
}
