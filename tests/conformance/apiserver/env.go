// Package apiserver judges the rendered stacks with a real kube-apiserver v1.36.3 and etcd
// (controller-runtime's envtest): every rendered object is admitted (schema validation, defaulting,
// the CRDs' CEL rules), the do-not-disrupt admission policies act only on the pods and workloads
// they are meant for, and Pod Security Admission enforces the level each workload template promises.
//
// Each scenario is a function of (ctx, *Env, *render.Render) returning every problem it found, so a
// test runs it on the good renders expecting none, and on the known-bad renders
// (tests/conformance/mutate.py) expecting the specific problem.
package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/karpenter-provider-aws/pkg/apis"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"eks-gpu-platform.local/conformance/internal/render"
)

// FieldManager owns everything the suite applies (server-side apply).
const FieldManager = "conformance"

// CRDSource is one origin of the CustomResourceDefinitions the renders' objects need: objects
// compiled into the suite (CRDs), or files of the repository envtest reads (Files, relative to the
// repository root).
type CRDSource struct {
	Name  string
	CRDs  []*apiextensionsv1.CustomResourceDefinition
	Files []string
}

// KarpenterCRDs are Karpenter's four (NodePool, NodeClaim, NodeOverlay, EC2NodeClass): the files
// of aws/karpenter-provider-aws pkg/apis/crds/ the provider embeds (pkg/apis/apis.go, CRDs), at
// the version go.mod pins and go.sum checks (v1.15.0; the same files as v1.15.1's, the chart
// version deployed: tests/upstream_modules.py). The karpenter package's environment installs the
// same objects itself (coretest.WithCRDs(apis.CRDs...)).
var KarpenterCRDs = CRDSource{Name: "github.com/aws/karpenter-provider-aws pkg/apis", CRDs: apis.CRDs}

// CRDSources are every source Start installs.
var CRDSources = []CRDSource{KarpenterCRDs, {Name: "tests/upstream_facts/crds/", Files: CRDFiles}}

// CRDFiles are the project's own structural schemas of KAI's Queue and PodGroup (kai-scheduler
// v0.17.0) and mpi-operator v0.6.0's MPIJob, each field cited in the file, relative to the
// repository root; the Python suite validates against the same files (tests/crd_validation.py).
var CRDFiles = []string{
	"tests/upstream_facts/crds/kai-scheduler.yaml",
	"tests/upstream_facts/crds/mpi-operator.yaml",
}

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Env is the running API server and the clients the scenarios use.
type Env struct {
	Repo     string
	Config   *rest.Config
	Dynamic  dynamic.Interface
	Discover discovery.DiscoveryInterface
	Mapper   meta.ResettableRESTMapper
	testEnv  *envtest.Environment

	// mu serialises the scenarios: they share one API server and its cluster-scoped objects.
	mu sync.Mutex
}

// Start runs etcd and kube-apiserver from $KUBEBUILDER_ASSETS with envtest's default flags and
// installs CRDFiles. envtest's defaults (controller-runtime v0.23.1
// pkg/internal/testing/controlplane/apiserver.go defaultArgs) disable only the ServiceAccount
// admission plugin; kube-apiserver v1.36.3 enables Priority, PodSecurity, MutatingAdmissionPolicy
// and ValidatingAdmissionPolicy by default (kubernetes v1.36.3
// pkg/kubeapiserver/options/plugins.go DefaultOffAdmissionPlugins, defaultOnPlugins), and the
// MutatingAdmissionPolicy feature gate is GA and on at 1.36 (k8s.io/apiserver v0.36.3
// pkg/features/kube_features.go), so no flag is set: TestServedAPIs checks the API is served.
func Start(repo string) (*Env, error) {
	te := &envtest.Environment{
		CRDInstallOptions:     CRDInstallOptions(repo, CRDSources),
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("envtest (KUBEBUILDER_ASSETS holds kube-apiserver and etcd; "+
			"make conformance-bins builds them into tests/conformance/.bin/envtest): %w", err)
	}
	e, err := NewEnv(repo, cfg)
	if err != nil {
		return nil, err
	}
	e.testEnv = te
	return e, nil
}

// CRDInstallOptions are envtest's options installing every CRD of sources: a deep copy of each
// object (envtest writes the server's answer into the objects it creates) and each file under repo.
func CRDInstallOptions(repo string, sources []CRDSource) envtest.CRDInstallOptions {
	opts := envtest.CRDInstallOptions{ErrorIfPathMissing: true}
	for _, src := range sources {
		for _, crd := range src.CRDs {
			opts.CRDs = append(opts.CRDs, crd.DeepCopy())
		}
		for _, f := range src.Files {
			opts.Paths = append(opts.Paths, filepath.Join(repo, f))
		}
	}
	return opts
}

// NewEnv is an Env on an API server another package started (cfg: its admin config); Stop leaves
// that server running.
func NewEnv(repo string, cfg *rest.Config) (*Env, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &Env{Repo: repo, Config: cfg, Dynamic: dyn, Discover: disc, Mapper: mapper}, nil
}

// Stop stops the API server and etcd Start started.
func (e *Env) Stop() error {
	if e.testEnv == nil {
		return nil
	}
	return e.testEnv.Stop()
}

// Lock serialises scenarios on the shared API server; the returned func unlocks.
func (e *Env) Lock() func() {
	e.mu.Lock()
	return e.mu.Unlock
}

// Resource is the dynamic client for obj's kind (and namespace).
func (e *Env) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := e.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		e.Mapper.Reset()
		if mapping, err = e.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("%s is not served: %w", gvk, err)
		}
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		return e.Dynamic.Resource(mapping.Resource).Namespace(ns), nil
	}
	return e.Dynamic.Resource(mapping.Resource), nil
}

// Apply server-side applies obj (force, FieldManager) and returns what the server stored.
func (e *Env) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, err := e.Resource(obj)
	if err != nil {
		return nil, err
	}
	return res.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
}

// Create creates obj for real (every admission step runs, the object is stored) and returns it as
// stored.
func (e *Env) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, err := e.Resource(obj)
	if err != nil {
		return nil, err
	}
	return res.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{FieldManager: FieldManager})
}

// DryRunCreate creates obj with dryRun=All (every admission step runs, nothing is stored) and
// returns the object as admitted.
func (e *Env) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, err := e.Resource(obj)
	if err != nil {
		return nil, err
	}
	return res.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: FieldManager})
}

// Delete deletes obj; a missing object is not an error.
func (e *Env) Delete(ctx context.Context, obj *unstructured.Unstructured) error {
	res, err := e.Resource(obj)
	if err != nil {
		return err
	}
	background := metav1.DeletePropagationBackground
	err = res.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// EnsureNamespace creates a namespace without labels unless it exists.
func (e *Env) EnsureNamespace(ctx context.Context, name string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	res, err := e.Resource(ns)
	if err != nil {
		return err
	}
	_, err = res.Create(ctx, ns, metav1.CreateOptions{FieldManager: "conformance-fixture"})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ResetNamespaces removes the labels the suite applied to every namespace it manages that keep
// does not name (server-side apply of a bare namespace by the same manager drops the fields it no
// longer sets), so one render's namespace labels never judge the next render. Namespaces cannot be
// deleted on envtest (no namespace controller runs their finalizer).
func (e *Env) ResetNamespaces(ctx context.Context, keep map[string]bool) error {
	list, err := e.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ns := range list.Items {
		if keep[ns.GetName()] || !managedBy(&ns, FieldManager) {
			continue
		}
		bare := &unstructured.Unstructured{}
		bare.SetAPIVersion("v1")
		bare.SetKind("Namespace")
		bare.SetName(ns.GetName())
		if _, err := e.Apply(ctx, bare); err != nil {
			return err
		}
	}
	return nil
}

func managedBy(obj *unstructured.Unstructured, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// Poll calls check every 200 ms until it returns nil or timeout passes; then the last error.
func Poll(ctx context.Context, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// applyOrder is the rank of a kind in the apply order: CRDs, namespaces, priority classes, queues,
// admission policies and their bindings, then everything else (a workload's namespace, priority
// class and queue exist before it, and the policies judge it).
func applyOrder(kind string) int {
	switch kind {
	case "CustomResourceDefinition":
		return 0
	case "Namespace":
		return 1
	case "PriorityClass":
		return 2
	case "Queue":
		return 3
	case "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy":
		return 4
	case "MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicyBinding":
		return 5
	}
	return 6
}

// Ordered is docs sorted stably by applyOrder.
func Ordered(docs []render.Doc) []render.Doc {
	out := append([]render.Doc{}, docs...)
	sort.SliceStable(out, func(i, j int) bool {
		return applyOrder(out[i].Object.GetKind()) < applyOrder(out[j].Object.GetKind())
	})
	return out
}

// DoNotDisruptPolicies are the names of the render's do-not-disrupt admission policies: the
// Mutating or ValidatingAdmissionPolicies whose spec names the karpenter.sh/do-not-disrupt
// annotation. Other admission policies of the render (the MIG startup remover's, which lets its
// ServiceAccount only remove a startup taint from its own node) are ordinary objects here.
func DoNotDisruptPolicies(r *render.Render) map[string]bool {
	out := map[string]bool{}
	for _, kind := range []string{"MutatingAdmissionPolicy", "ValidatingAdmissionPolicy"} {
		for _, d := range r.Kind(kind) {
			spec, _, _ := unstructured.NestedFieldNoCopy(d.Object.Object, "spec")
			if raw, err := json.Marshal(spec); err == nil && strings.Contains(string(raw), DoNotDisrupt) {
				out[d.Object.GetName()] = true
			}
		}
	}
	return out
}

// IsPolicy says whether doc is one of the render's do-not-disrupt admission policies
// (DoNotDisruptPolicies) or a binding of one (spec.policyName).
func IsPolicy(r *render.Render, doc render.Doc) bool {
	policies := DoNotDisruptPolicies(r)
	switch applyOrder(doc.Object.GetKind()) {
	case 4:
		return policies[doc.Object.GetName()]
	case 5:
		name, _, _ := unstructured.NestedString(doc.Object.Object, "spec", "policyName")
		return policies[name]
	}
	return false
}

func errorText(err error) string {
	if status, ok := err.(apierrors.APIStatus); ok {
		return strings.TrimSpace(status.Status().Message)
	}
	return err.Error()
}
