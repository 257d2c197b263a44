package karpenter

// Pods shaped like the render's workload templates (examples/), as their controllers create them.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"eks-gpu-platform.local/conformance/internal/render"
)

// Workload is one template of examples/: its pod template and how many pods it starts.
type Workload struct {
	Doc      render.Doc
	Kind     string // Job, Deployment, Pod
	Name     string
	Template corev1.PodTemplateSpec
	Replicas int
	Pools    []string // the eks-gpu-platform.io/pool values of its required node affinity
}

const poolLabel = "eks-gpu-platform.io/pool"

// Workloads lists the pod-creating objects of the render's examples.
func (r *Render) Workloads() ([]Workload, error) {
	var out []Workload
	for _, d := range r.Examples {
		w := Workload{Doc: d, Kind: d.Object.GetKind(), Name: d.Object.GetName()}
		switch w.Kind {
		case "Job":
			var job struct {
				Spec struct {
					Parallelism *int32                 `json:"parallelism"`
					Template    corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if err := fromUnstructuredLoose(d.Object, &job); err != nil {
				return nil, fmt.Errorf("%s: %w", d, err)
			}
			w.Template, w.Replicas = job.Spec.Template, int(deref(job.Spec.Parallelism, 1))
			w.Template.Labels = merge(w.Template.Labels, map[string]string{
				"batch.kubernetes.io/job-name": w.Name, "job-name": w.Name, // the Job controller's labels
			})
		case "Deployment":
			var dep struct {
				Spec struct {
					Replicas *int32                 `json:"replicas"`
					Template corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if err := fromUnstructuredLoose(d.Object, &dep); err != nil {
				return nil, fmt.Errorf("%s: %w", d, err)
			}
			w.Template, w.Replicas = dep.Spec.Template, int(deref(dep.Spec.Replicas, 1))
		case "Pod":
			var pod corev1.Pod
			if err := fromUnstructured(d.Object, &pod); err != nil {
				return nil, fmt.Errorf("%s: %w", d, err)
			}
			w.Template, w.Replicas = corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}, 1
		default:
			continue
		}
		w.Template.Namespace = d.Object.GetNamespace()
		w.Pools = requiredPools(w.Template.Spec.Affinity)
		out = append(out, w)
	}
	return out, nil
}

// Pods are the workload's pods, named <name>-<i>, pending. With replicas > 0 that count is made.
func (w Workload) Pods(replicas int) []*corev1.Pod {
	if replicas <= 0 {
		replicas = w.Replicas
	}
	var out []*corev1.Pod
	for i := 0; i < replicas; i++ {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d", w.Name, i), Namespace: w.Template.Namespace,
				Labels: copyMap(w.Template.Labels), Annotations: copyMap(w.Template.Annotations),
			},
			Spec: *w.Template.Spec.DeepCopy(),
		}
		if w.Kind == "Job" {
			p.Labels["batch.kubernetes.io/job-completion-index"] = fmt.Sprint(i)
		}
		out = append(out, p)
	}
	return out
}

// UnitPod is a pod of the pool's template shape asking for `units` of one resource (the pool's
// GPU or CPU unit) and nothing else extended: the flood's pod.
func UnitPod(template corev1.PodTemplateSpec, namespace, name string, requests corev1.ResourceList) *corev1.Pod {
	spec := corev1.PodSpec{
		Affinity:     template.Spec.Affinity.DeepCopy(),
		Tolerations:  append([]corev1.Toleration{}, template.Spec.Tolerations...),
		NodeSelector: copyMap(template.Spec.NodeSelector),
		Containers: []corev1.Container{{
			Name: "unit", Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: extendedOnly(requests)},
		}},
	}
	if spec.Affinity != nil {
		spec.Affinity.PodAffinity = nil // a flood has no gang
		spec.Affinity.PodAntiAffinity = nil
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}
}

// PoolTemplate: tolerations and node affinity that reach exactly the pool (its NodePools' taints
// tolerated, its pool label required): the shape every template of the pool shares.
func PoolTemplate(pool string, nodePoolTaints []corev1.Taint) corev1.PodTemplateSpec {
	var tolerations []corev1.Toleration
	for _, t := range nodePoolTaints {
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect})
	}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Tolerations: tolerations,
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: poolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{pool},
			}}}},
		}}},
	}}
}

func requiredPools(a *corev1.Affinity) []string {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == poolLabel && e.Operator == corev1.NodeSelectorOpIn {
				out = append(out, e.Values...)
			}
		}
	}
	return out
}

func extendedOnly(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range l {
		if k != corev1.ResourceCPU && k != corev1.ResourceMemory {
			out[k] = v
		}
	}
	return out
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func deref(p *int32, d int32) int32 {
	if p == nil {
		return d
	}
	return *p
}

func merge(a, b map[string]string) map[string]string {
	out := copyMap(a)
	for k, v := range b {
		out[k] = v
	}
	return out
}

func copyMap(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
