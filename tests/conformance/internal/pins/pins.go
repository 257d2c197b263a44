//go:build tools

// Package pins keeps the suite's pinned upstream modules in go.mod while no compiled package
// imports them yet (`go mod tidy` reads every build tag; the `tools` tag is never built): the
// Karpenter v1.15.0 core and AWS provider the karpenter/ package judges the renders with, and
// controller-runtime v0.24.1 (envtest) as Karpenter pins it.
package pins

import (
	_ "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/karpenter/pkg/apis/v1"
)
