package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"eks-gpu-platform.local/conformance/internal/render"
)

// Pod Security labels (k8s.io/pod-security-admission v0.36.3 api/constants.go).
const (
	enforceLabel        = "pod-security.kubernetes.io/enforce"
	enforceVersionLabel = "pod-security.kubernetes.io/enforce-version"
)

// headerLevel is the level a template's first line promises: "# pod-security: <level>[ - why]"
// (README "Workload templates").
func headerLevel(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# pod-security: ")
	if !ok {
		return "", fmt.Errorf("%s: the first line is not \"# pod-security: <level>\": %q", path, strings.TrimSpace(line))
	}
	level, _, _ := strings.Cut(rest, " ")
	return level, nil
}

// podTemplates finds every pod template in obj (a Pod itself; any "template" map with a spec
// holding containers: Deployment, Job, CronJob, MPIJob replica specs), with its path for messages.
func podTemplates(obj *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	if obj.GetKind() == "Pod" {
		out["pod"] = obj.Object
		return out
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, child := range m {
			p := path + "." + k
			if cm, ok := child.(map[string]any); ok && k == "template" {
				if spec, ok := cm["spec"].(map[string]any); ok {
					if _, ok := spec["containers"]; ok {
						out[strings.TrimPrefix(p, ".")] = cm
						continue
					}
				}
			}
			walk(p, child)
		}
	}
	walk("", obj.Object)
	return out
}

// warnings collects the API server's warnings for one client.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// violations are pods Pod Security "baseline" (and so "restricted") forbids, one per control the
// issue names: a privileged container, a hostPath volume, the host network
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/, baseline).
var violations = map[string]func(pod map[string]any){
	"privileged": func(pod map[string]any) {
		c := pod["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["securityContext"] = map[string]any{"privileged": true}
	},
	"hostPath": func(pod map[string]any) {
		spec := pod["spec"].(map[string]any)
		spec["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/var/run"}}}
	},
	"hostNetwork": func(pod map[string]any) {
		pod["spec"].(map[string]any)["hostNetwork"] = true
	},
}

// restrictedOnly is a pod "baseline" allows and "restricted" forbids: a container with no
// securityContext (runAsNonRoot, allowPrivilegeEscalation, capabilities and seccomp unset).
func plainPod(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "image": "public.ecr.aws/docker/library/busybox:1.37",
		}}},
	}
}

// PodSecurityScenario judges README "Workload templates", Pod Security: each template's namespace
// enforces the level its header promises; a privileged, a hostPath and a hostNetwork pod are
// rejected there by Pod Security Admission at that level; a pod that only "restricted" forbids is
// rejected in a restricted namespace and admitted in a baseline one; and every pod template the
// file holds is admitted as a pod (dryRun=All), restricted ones without a Pod Security warning.
func PodSecurityScenario(ctx context.Context, e *Env, r *render.Render) []error {
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	namespaces := map[string]*unstructured.Unstructured{}
	for _, d := range Ordered(r.All()) {
		switch d.Object.GetKind() {
		case "Namespace":
			namespaces[d.Object.GetName()] = d.Object
			fallthrough
		case "PriorityClass", "Queue":
			if _, err := e.Apply(ctx, d.Object); err != nil {
				return []error{fmt.Errorf("%s: %s", d, errorText(err))}
			}
		}
	}
	w := &warnings{}
	cfg := rest.CopyConfig(e.Config)
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return []error{err}
	}
	pods := dyn.Resource(podsResource)
	create := func(ns string, pod map[string]any) error {
		_, err := pods.Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: pod},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}

	byFile := map[string][]render.Doc{}
	for _, d := range r.Examples {
		byFile[d.File] = append(byFile[d.File], d)
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return []error{fmt.Errorf("render %s: no workload templates in examples/", r.Stack)}
	}
	for _, file := range files {
		level, err := headerLevel(filepath.Join(r.Dir, file))
		if err != nil {
			fail("%v", err)
			continue
		}
		ns := ""
		for _, d := range byFile[file] {
			if d.Object.GetKind() != "Namespace" && d.Object.GetNamespace() != "" {
				ns = d.Object.GetNamespace()
				break
			}
		}
		nsObj := namespaces[ns]
		if nsObj == nil {
			fail("%s: its namespace %q is not among the render's Namespaces", file, ns)
			continue
		}
		labels := nsObj.GetLabels()
		if labels[enforceLabel] != level {
			// Go on: the pods below show what the API server really admits there.
			fail("%s promises pod-security %s, its namespace %s enforces %q", file, level, ns, labels[enforceLabel])
		}
		version := labels[enforceVersionLabel]
		if version == "" {
			version = "latest"
		}
		want := fmt.Sprintf("violates PodSecurity %q", level+":"+version)
		names := make([]string, 0, len(violations))
		for n := range violations {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			pod := plainPod(ns, "conformance-"+strings.ToLower(n))
			violations[n](pod)
			err := create(ns, pod)
			if err == nil {
				fail("%s: a %s pod admitted in namespace %s (promised %s)", file, n, ns, level)
			} else if !strings.Contains(errorText(err), want) {
				fail("%s: a %s pod in namespace %s rejected, but not by Pod Security %s: %s", file, n, ns, level, errorText(err))
			}
		}
		err = create(ns, plainPod(ns, "conformance-restricted-only"))
		switch {
		case level == "restricted" && err == nil:
			fail("%s: a pod without the restricted securityContext admitted in namespace %s (promised restricted)", file, ns)
		case level == "restricted" && !strings.Contains(errorText(err), want):
			fail("%s: a pod without the restricted securityContext rejected in %s, but not by Pod Security: %s", file, ns, errorText(err))
		case level == "baseline" && err != nil:
			fail("%s: a baseline pod rejected in namespace %s (promised baseline): %s", file, ns, errorText(err))
		}
		w.take()
		for _, d := range byFile[file] {
			templates := podTemplates(d.Object)
			paths := make([]string, 0, len(templates))
			for p := range templates {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				t := templates[p]
				pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": t["spec"]}
				meta, _ := t["metadata"].(map[string]any)
				m := map[string]any{"generateName": "conformance-", "namespace": d.Object.GetNamespace()}
				for _, k := range []string{"labels", "annotations"} {
					if v, ok := meta[k]; ok {
						m[k] = v
					}
				}
				pod["metadata"] = m
				if err := create(d.Object.GetNamespace(), pod); err != nil {
					fail("%s: the pod of %s (%s) not admitted: %s", file, d, p, errorText(err))
				}
				for _, msg := range w.take() {
					if level == "restricted" && bytes.Contains([]byte(msg), []byte("PodSecurity")) {
						fail("%s: the pod of %s (%s) warned: %s", file, d, p, msg)
					}
				}
			}
		}
	}
	return problems
}
