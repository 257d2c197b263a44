package apiserver

import (
	"context"
	"fmt"

	"eks-gpu-platform.local/conformance/internal/render"
)

// AdmittedScenario judges README's claim that the render applies as written ("Workload templates":
// `kubectl apply -f`; the manifests the stack installs): every object of manifests/ and examples/
// is applied for real (server-side apply) in dependency order, with the render's admission
// policies active before the rest, so real schema validation, defaulting, the CRDs' CEL rules
// (x-kubernetes-validations), Pod Security and the policies judge each. helm/ holds Helm values,
// not objects, and is not applied. Everything but the namespaces is deleted afterwards.
func AdmittedScenario(ctx context.Context, e *Env, r *render.Render, fx *Fixtures) []error {
	var applied []render.Doc
	problems := e.withPolicies(ctx, r, fx, func(Mode, []string) []error {
		var problems []error
		for _, d := range Ordered(r.All()) {
			if IsPolicy(r, d) {
				continue
			}
			if _, err := e.Apply(ctx, d.Object); err != nil {
				problems = append(problems, fmt.Errorf("%s not admitted: %s", d, errorText(err)))
				continue
			}
			applied = append(applied, d)
		}
		// The tenancy policies go before the do-not-disrupt ones are removed: they refuse the
		// KAI fixture pod that removal probes with (it selects no pool), as they should.
		kept := applied[:0]
		for _, d := range applied {
			if !isTenancy(d) {
				kept = append(kept, d)
			} else if err := e.Delete(ctx, d.Object); err != nil {
				problems = append(problems, fmt.Errorf("cleanup: %s: %s", d, errorText(err)))
			}
		}
		applied = kept
		return problems
	})
	for i := len(applied) - 1; i >= 0; i-- {
		if kind := applied[i].Object.GetKind(); kind == "Namespace" || kind == "CustomResourceDefinition" {
			continue
		}
		if err := e.Delete(ctx, applied[i].Object); err != nil {
			problems = append(problems, fmt.Errorf("cleanup: %s: %s", applied[i], errorText(err)))
		}
	}
	return problems
}
