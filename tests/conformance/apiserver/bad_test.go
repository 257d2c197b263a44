package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"eks-gpu-platform.local/conformance/internal/render"
)

// knownBad is what each known-bad render of tests/conformance/mutate.py that this package judges
// must make its scenario report: for each policy mode, problems that must all be found (each a
// substring of one problem).
type knownBad struct {
	scenario func(ctx context.Context, e *Env, r *render.Render, fx *Fixtures) []error
	want     map[Mode][]string
}

func podSecurity(ctx context.Context, e *Env, r *render.Render, _ *Fixtures) []error {
	return PodSecurityScenario(ctx, e, r)
}

var knownBads = map[string]knownBad{
	// Today's policies (issue 19): keyed on priority alone, in every namespace, ReplicaSets too.
	"admission-unscoped": {AdmissionScenario, map[Mode][]string{
		Mutate: {
			`system pod kube-system/aws-node-7xk2p (tests/fixtures/system-pods/aws-node.yaml) annotated karpenter.sh/do-not-disrupt="true"`,
			`system pod kube-system/kube-proxy-4mbq9 (tests/fixtures/system-pods/kube-proxy.yaml) annotated karpenter.sh/do-not-disrupt="true"`,
			`preemptible or non-KAI pod default/unlabelled-namespace-inference (tests/fixtures/kai-pods/must-not-match.yaml) annotated karpenter.sh/do-not-disrupt="true" (was "")`,
			`mutated: template annotated karpenter.sh/do-not-disrupt="true"`,
		},
		Deny: {
			`system pod kube-system/aws-node-7xk2p (tests/fixtures/system-pods/aws-node.yaml) denied: pods "aws-node-7xk2p" is forbidden: ValidatingAdmissionPolicy 'kai-non-preemptible-do-not-disrupt' with binding 'kai-non-preemptible-do-not-disrupt' denied request`,
			`preemptible or non-KAI pod default/unlabelled-namespace-inference (tests/fixtures/kai-pods/must-not-match.yaml) denied: `,
			`is forbidden: ValidatingAdmissionPolicy 'kai-non-preemptible-do-not-disrupt-workloads' with binding 'kai-non-preemptible-do-not-disrupt-workloads' denied request`,
		},
	}},
	// A queue namespace that enforces privileged instead of the restricted its template promises.
	"psa-privileged": {podSecurity, map[Mode][]string{
		Mutate: {`a privileged pod admitted in namespace`, `a hostNetwork pod admitted in namespace`, `a hostPath pod admitted in namespace`},
		Deny:   {`a privileged pod admitted in namespace`, `a hostNetwork pod admitted in namespace`, `a hostPath pod admitted in namespace`},
	}},
	// The tenancy pod policy admitting everything: the pod cases go through (the queue label
	// case, judged by the queue policy, still refuses).
	"tenancy-open": {TenancyScenario, map[Mode][]string{
		Mutate: {`a GPU pod under the default scheduler (`, `a pod with spec.nodeName (`, `a pod selecting another queue's pool (`, `a non-preemptible class in a preemptible-only queue (`},
		Deny:   {`a GPU pod under the default scheduler (`, `a pod with spec.nodeName (`, `a pod selecting another queue's pool (`, `a non-preemptible class in a preemptible-only queue (`},
	}},
	// A NodePool outside the CRD's expireAfter pattern: the real schema validation rejects it.
	"nodepool-invalid": {AdmittedScenario, map[Mode][]string{
		Mutate: {`NodePool general not admitted: NodePool.karpenter.sh "general" is invalid: spec.template.spec.expireAfter: Invalid value: "30d"`},
		Deny:   {`NodePool general not admitted: NodePool.karpenter.sh "general" is invalid: spec.template.spec.expireAfter: Invalid value: "30d"`},
	}},
}

// TestKnownBadRenders runs each scenario on the known-bad renders ($CONFORMANCE_BAD, written by
// tests/conformance/mutate.py) and expects its specific failure: the evidence that the scenario
// can fail. Mutations other packages judge are left to them.
func TestKnownBadRenders(t *testing.T) {
	bad, err := render.Bad()
	if err != nil {
		t.Fatal(err)
	}
	fx := fixtures(t)
	names := make([]string, 0, len(knownBads))
	for n := range knownBads {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		kb := knownBads[name]
		t.Run(name, func(t *testing.T) {
			stacks, err := render.Stacks(filepath.Join(bad, name))
			if err != nil {
				t.Fatalf("%s: %v (tests/conformance/mutate.py writes it)", name, err)
			}
			for _, stack := range stacks {
				t.Run(stack, func(t *testing.T) {
					r, err := render.Load(stack, filepath.Join(bad, name, stack))
					if err != nil {
						t.Fatal(err)
					}
					mode, err := PolicyMode(r)
					if err != nil {
						t.Fatal(err)
					}
					unlock := env.Lock()
					problems := kb.scenario(context.Background(), env, r, fx)
					unlock()
					var got []string
					for _, p := range problems {
						got = append(got, p.Error())
					}
					for _, want := range kb.want[mode] {
						if !anyContains(got, want) {
							t.Errorf("known-bad %s/%s: no problem reports %q; got:\n%s", name, stack, want, strings.Join(got, "\n"))
						}
					}
				})
			}
		})
	}
	entries, _ := os.ReadDir(bad)
	for _, e := range entries {
		if _, ours := knownBads[e.Name()]; e.IsDir() && !ours {
			t.Logf("%s: judged by another package", e.Name())
		}
	}
}

func anyContains(got []string, want string) bool {
	for _, g := range got {
		if strings.Contains(g, want) {
			return true
		}
	}
	return false
}
