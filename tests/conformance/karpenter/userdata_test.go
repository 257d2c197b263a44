package karpenter

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
)

// The kubelet pull settings the EC2NodeClasses' NodeConfig part sets (tests/nodepool/
// test_userdata.py NODE_CONFIG): Karpenter's own NodeConfig, appended last, must not set them.
var pullSettings = []string{"serializeImagePulls", "maxParallelImagePulls", "registryPullQPS", "registryBurst"}

type mimePart struct{ ContentType, Body string }

func mimeParts(text string) ([]mimePart, error) {
	msg, err := mail.ReadMessage(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var out []mimePart
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out = append(out, mimePart{ct, strings.TrimSpace(string(body))})
	}
}

// scenarioUserData (d): for one node of each GPU pool, the user data in the launch template
// Karpenter v1.15.0 creates (the fake's CreateLaunchTemplate input) keeps every part of the
// EC2NodeClass's userData first, unchanged and in order, and ends with Karpenter's own NodeConfig
// (pkg/providers/amifamily/bootstrap/nodeadm.go L40-58 Script), which sets none of the pull
// settings (what tests/nodepool/test_userdata.py
// test_karpenter_keeps_the_user_parts_before_its_own_nodeconfig asserts by reading the source).
func scenarioUserData(r *Render, d *InstanceData) []error {
	var errs []error
	for _, pool := range r.Capacity.Pools {
		h, herrs := newHarness(r, d)
		if herrs != nil {
			return append(errs, herrs...)
		}
		var taints []corev1.Taint
		for _, np := range nodePoolsOf(r, pool.Name) {
			taints = append(taints, h.NodePools[np].Spec.Template.Spec.Taints...)
		}
		requests := rl("cpu", "100m", "memory", "128Mi", string(gpu), "1")
		if len(pool.DRADevicesPerNode) > 0 {
			// A DRA pool's NodeOverlays set nvidia.com/gpu to 0 (dra_test.go): a pod of the pool's
			// shape asking for no GPU launches its node.
			requests = rl("cpu", "100m", "memory", "128Mi")
		}
		round, err := h.Provision(UnitPod(PoolTemplate(pool.Name, taints), "default", "userdata-"+pool.Name, requests))
		if err != nil {
			errs = append(errs, fmt.Errorf("pool %s: %w", pool.Name, err))
			continue
		}
		if len(round.Launched) != 1 {
			errs = append(errs, fmt.Errorf("pool %s: one pod launched %s: %s", pool.Name, describe(round.Launched), firstPodError(round)))
			continue
		}
		nodeClass := h.NodeClasses[h.NodePools[round.Launched[0].NodePool()].Spec.Template.Spec.NodeClassRef.Name]
		want, err := mimeParts(aws.ToString(nodeClass.Spec.UserData))
		if err != nil {
			errs = append(errs, fmt.Errorf("pool %s: EC2NodeClass %s userData is not MIME: %w", pool.Name, nodeClass.Name, err))
			continue
		}
		var inputs []*ec2.CreateLaunchTemplateInput
		h.AWS.EC2API.CreateLaunchTemplateBehavior.CalledWithInput.ForEach(func(in *ec2.CreateLaunchTemplateInput) { inputs = append(inputs, in) })
		if len(inputs) == 0 {
			errs = append(errs, fmt.Errorf("pool %s: no CreateLaunchTemplate call recorded", pool.Name))
			continue
		}
		for _, in := range inputs {
			raw, err := base64.StdEncoding.DecodeString(aws.ToString(in.LaunchTemplateData.UserData))
			if err != nil {
				errs = append(errs, fmt.Errorf("pool %s: launch template user data: %w", pool.Name, err))
				continue
			}
			got, err := mimeParts(string(raw))
			if err != nil {
				errs = append(errs, fmt.Errorf("pool %s: launch template user data is not MIME: %w", pool.Name, err))
				continue
			}
			if len(got) != len(want)+1 {
				errs = append(errs, fmt.Errorf("pool %s: launch template user data has %d parts, the EC2NodeClass %d plus Karpenter's NodeConfig", pool.Name, len(got), len(want)))
				continue
			}
			for i := range want {
				if got[i] != want[i] {
					errs = append(errs, fmt.Errorf("pool %s: user data part %d is %s %q, the EC2NodeClass's is %s %q", pool.Name, i, got[i].ContentType, got[i].Body, want[i].ContentType, want[i].Body))
				}
			}
			last := got[len(got)-1]
			if last.ContentType != "application/node.eks.aws" {
				errs = append(errs, fmt.Errorf("pool %s: Karpenter's last part is %s, not its NodeConfig", pool.Name, last.ContentType))
			}
			for _, key := range pullSettings {
				if strings.Contains(last.Body, key) {
					errs = append(errs, fmt.Errorf("pool %s: Karpenter's NodeConfig sets %s, overriding the EC2NodeClass's", pool.Name, key))
				}
			}
		}
	}
	return errs
}
