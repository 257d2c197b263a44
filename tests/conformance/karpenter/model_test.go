package karpenter

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
)

// modelFlood is the part of `python tests/karpenter_model.py flood <render> <pool>` the
// differential compares (the model's module docstring on the model branch).
type modelFlood struct {
	PodsSent      int                         `json:"podsSent"`
	PodsScheduled int                         `json:"podsScheduled"`
	Usage         map[string]map[string]int64 `json:"usage"`
	NodeClaims    []struct {
		NodePool string `json:"nodePool"`
		Launched string `json:"launched"`
	} `json:"nodeClaims"`
}

// TestModelDifferential: the Python model of Karpenter (tests/karpenter_model.py, the capacity
// tests' oracle) and the real Karpenter flood each GPU pool with the same unit pods (1 GPU, 100m
// CPU, 128Mi); the GPUs charged per NodePool, the nodes per NodePool and the pods scheduled must
// agree. Skipped, saying why, if the model has no `flood` command.
func TestModelDifferential(t *testing.T) {
	requireSetup(t)
	model := filepath.Join(repoDir, "tests", "karpenter_model.py")
	src, err := os.ReadFile(model)
	if err != nil || !strings.Contains(string(src), `add_parser("flood"`) {
		t.Skipf("%s has no `flood` command yet: the differential test cannot run", model)
	}
	python := filepath.Join(repoDir, ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		python = "python3"
	}
	for _, r := range goodRenders(t) {
		probe, errs := newHarness(r, instanceData)
		if errs != nil {
			t.Fatal(errs)
		}
		pools := gpuNodePools(probe)
		for _, pool := range r.Capacity.Pools {
			t.Run(r.Stack+"/"+pool.Name, func(t *testing.T) {
				gomega.RegisterTestingT(t)
				units := int64(0)
				for _, l := range pool.Limit {
					units += l[string(gpu)]
				}
				pods := int(units) + 2
				cmd := exec.Command(python, model, "flood", r.Dir, pool.Name, "--gpus", "1", "--cpu", "100", "--memory-mib", "128", "--pods", fmt.Sprint(pods))
				cmd.Dir = repoDir
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, exitStderr(err))
				}
				var m modelFlood
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatalf("model output: %v\n%s", err, out)
				}
				h, errs := newHarness(r, instanceData)
				if errs != nil {
					t.Fatal(errs)
				}
				var taints []corev1.Taint
				for _, np := range nodePoolsOf(r, pool.Name) {
					taints = append(taints, h.NodePools[np].Spec.Template.Spec.Taints...)
				}
				template := PoolTemplate(pool.Name, lo.UniqBy(taints, func(t corev1.Taint) string { return t.Key + string(t.Effect) }))
				unit := rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")
				sent := 0
				launched, _, err := h.Flood(func(i int) *corev1.Pod {
					sent++
					return UnitPod(template, "default", fmt.Sprintf("diff-%s-%d", pool.Name, i), unit)
				}, pods, 1)
				if err != nil {
					t.Fatal(err)
				}
				// Later rounds re-schedule the pods still pending, adding none.
				for i := 0; i < 20; i++ {
					round, err := h.Provision()
					if err != nil {
						t.Fatal(err)
					}
					if len(round.Launched) == 0 {
						break
					}
					launched = append(launched, round.Launched...)
				}
				realUsage := map[string]int64{}
				realNodes := map[string]int{}
				scheduled := 0
				for _, l := range launched {
					q := l.NodeClaim.Status.Capacity[gpu]
					realUsage[l.NodePool()] += q.Value()
					realNodes[l.NodePool()]++
					scheduled += len(l.Pods)
				}
				modelNodes := map[string]int{}
				for _, c := range m.NodeClaims {
					modelNodes[c.NodePool]++
				}
				for np, u := range m.Usage {
					if realUsage[np] != u[string(gpu)] {
						t.Errorf("pool %s, NodePool %s: Karpenter charged %d nvidia.com/gpu, the model %d (real launches: %s)", pool.Name, np, realUsage[np], u[string(gpu)], describe(launched))
					}
					if realNodes[np] != modelNodes[np] {
						t.Errorf("pool %s, NodePool %s: Karpenter launched %d nodes, the model %d (real launches: %s)", pool.Name, np, realNodes[np], modelNodes[np], describe(launched))
					}
				}
				// A NodePool the model leaves out, where Karpenter launched or which the pool has
				// (the rendered NodePools carrying its label), is a model that omits a NodePool
				// (review 2026-11-27 L2).
				for _, np := range lo.Uniq(append(sortedKeys(realUsage), pools[pool.Name]...)) {
					if _, ok := m.Usage[np]; !ok {
						t.Errorf("pool %s, NodePool %s: the model reports no usage for it; Karpenter charged %d nvidia.com/gpu on %d nodes (real launches: %s)", pool.Name, np, realUsage[np], realNodes[np], describe(launched))
					}
				}
				if scheduled != m.PodsScheduled {
					t.Errorf("pool %s: Karpenter scheduled %d of %d pods, the model %d", pool.Name, scheduled, sent, m.PodsScheduled)
				}
			})
		}
	}
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
