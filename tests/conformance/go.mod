module eks-gpu-platform.local/conformance

go 1.26.6

require (
	github.com/aws/karpenter-provider-aws v1.14.1
	sigs.k8s.io/controller-runtime v0.23.1
	sigs.k8s.io/karpenter v1.14.1
)
