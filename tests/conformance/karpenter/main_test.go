package karpenter

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onsi/gomega"

	"eks-gpu-platform.local/conformance/internal/render"
)

var (
	repoDir      string
	instanceData *InstanceData
	setupErr     error
)

func TestMain(m *testing.M) {
	setupErr = setup()
	code := m.Run()
	stopSuite()
	os.Exit(code)
}

func setup() error {
	var err error
	if repoDir, err = render.Repo(); err != nil {
		return err
	}
	if err := loadSupportedMinors(repoDir); err != nil {
		return err
	}
	if instanceData, err = LoadInstanceData(repoDir); err != nil {
		return err
	}
	return startSuite()
}

// requireSetup fails (never skips) the test when an input is missing.
func requireSetup(t *testing.T) {
	t.Helper()
	gomega.RegisterTestingT(t)
	if setupErr != nil {
		t.Fatalf("conformance/karpenter setup: %v", setupErr)
	}
}

// Scenario judges one claim of the README or capacity.json on one render: nil is a pass.
type Scenario struct {
	Name   string
	Claim  string                                   // the README / capacity.json claim it judges
	Stacks func(r *Render) bool                     // which renders it applies to
	Run    func(r *Render, d *InstanceData) []error // the judge
}

func goodRenders(t *testing.T) []*Render {
	t.Helper()
	dir, stacks, err := render.Renders()
	if err != nil {
		t.Fatalf("renders: %v", err)
	}
	var out []*Render
	for _, s := range stacks {
		r, err := LoadRender(s, filepath.Join(dir, s))
		if err != nil {
			t.Fatalf("render %s: %v", s, err)
		}
		out = append(out, r)
	}
	return out
}

// TestScenarios runs every scenario on every render it applies to: each must pass.
func TestScenarios(t *testing.T) {
	requireSetup(t)
	renders := goodRenders(t)
	for _, sc := range scenarios {
		for _, r := range renders {
			if !sc.Stacks(r) {
				continue
			}
			t.Run(sc.Name+"/"+r.Stack, func(t *testing.T) {
				gomega.RegisterTestingT(t)
				for _, err := range sc.Run(r, instanceData) {
					t.Error(err)
				}
			})
		}
	}
}

// knownBad names, per mutation of tests/conformance/mutate.py, the scenario that must reject it and
// a regular expression its errors must match.
var knownBad = []struct {
	Mutation, Scenario, Want string
}{
	{"efa-split", "efa-gang", "all available instance types exceed limits"},
	// The first GPU NodePool's limit doubled (dev gpu-spot 6 -> 12, prod inference 16 -> 32): above
	// what KAI admits from the rendered Queues (oracle_test.go), whatever capacity.json says.
	{"nodepool-limit-raised", "pool-flood", `pool-flood: pool (gpu-spot|inference): the flood bought (12|32) nvidia.com/gpu \(NodePools \[(gpu-spot|inference)\]\), KAI admits at most (8|16) there, (8|16) in whole nodes: Karpenter buys GPUs no queue can use \(.*queue (research-batch|serving) gpu.limit`},
	{"overlay-missing", "overlay-units", "charged whole GPUs"},
	// The gang pinned to the NodePool's last type, not the reservation's (review H3): prod's is
	// p5e.48xlarge, which EC2 offers nowhere in us-east-1 in the suite's data, so nothing launches.
	{"gang-off-reservation", "gang-reservation", `gang train-llm-training: (2 pods with reservations .* available launched no node|NodeClaim .* not a reservation's)`},
	// MutatingAdmissionPolicy (1.36): system pods annotated, the node kept; ValidatingAdmissionPolicy
	// (dev-1.35): system pods refused.
	{"admission-unscoped", "disruption", "is not a consolidation candidate|the API server refused system pod"},
}

// TestKnownBad runs each scenario on its known-bad renders (CONFORMANCE_BAD): each must fail with
// the expected error.
func TestKnownBad(t *testing.T) {
	requireSetup(t)
	bad, err := render.Bad()
	if err != nil {
		t.Fatal(err)
	}
	var written map[string][]string
	data, err := os.ReadFile(filepath.Join(bad, "mutations.json"))
	if err != nil {
		t.Fatalf("known-bad renders: %v", err)
	}
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatalf("%s/mutations.json: %v", bad, err)
	}
	for _, kb := range knownBad {
		sc := scenarioNamed(kb.Scenario)
		stacks := written[kb.Mutation]
		if len(stacks) == 0 {
			t.Errorf("mutation %s: no known-bad render in %s (mutate.py must write it)", kb.Mutation, bad)
			continue
		}
		for _, stack := range stacks {
			t.Run(kb.Mutation+"/"+stack, func(t *testing.T) {
				gomega.RegisterTestingT(t)
				r, err := LoadRender(stack, filepath.Join(bad, kb.Mutation, stack))
				if err != nil {
					t.Fatal(err)
				}
				if !sc.Stacks(r) {
					t.Fatalf("scenario %s does not apply to known-bad render %s/%s", sc.Name, kb.Mutation, stack)
				}
				errs := sc.Run(r, instanceData)
				if len(errs) == 0 {
					t.Fatalf("scenario %s passed on known-bad render %s/%s: it must fail with %q", sc.Name, kb.Mutation, stack, kb.Want)
				}
				var msgs []string
				for _, e := range errs {
					msgs = append(msgs, e.Error())
				}
				joined := strings.Join(msgs, "\n")
				if !regexp.MustCompile(kb.Want).MatchString(joined) {
					t.Fatalf("scenario %s on %s/%s failed, but not with %q:\n%s", sc.Name, kb.Mutation, stack, kb.Want, joined)
				}
				t.Logf("rejected as expected:\n%s", joined)
			})
		}
	}
}

func scenarioNamed(name string) Scenario {
	for _, s := range scenarios {
		if s.Name == name {
			return s
		}
	}
	panic(fmt.Sprintf("no scenario %s", name))
}
