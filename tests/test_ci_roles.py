"""Issue 29, points 6 and 7: the CI roles' documents the project ships
(``security/ci-roles/``, set up by hand per docs/ci.md), each compared with an exact document
written here.

- The deploy role trusts one subject: the stack's environment *and* ``refs/heads/main``, in
  the format of the repository's customized OIDC subject template (``repo``, ``context``,
  ``ref``): GitHub's "Customizing the subject claims for an organization or repository",
  https://docs.github.com/en/actions/reference/security/oidc#customizing-the-subject-claims-for-an-organization-or-repository
  (each included claim is appended as ``<claim>:<value>``; ``context`` is
  ``environment:<name>`` for a job that references an environment, else ``pull_request``).
  A pull request that adds ``environment: <stack>`` to its own job gets
  ``...:environment:<stack>:ref:refs/pull/<n>/merge``, which it does not match.
- The preview role reads only what the program's invokes and a ``--refresh`` of the stack's
  resource types read: the expected actions are this file's own tables, and every invoke and
  AWS resource type of both fixture renders must be in them (a new one fails here first).
"""

import json
from pathlib import Path

import pytest

ROLES = Path(__file__).resolve().parents[1] / "security" / "ci-roles"
OIDC = "arn:<partition>:iam::<account>:oidc-provider/token.actions.githubusercontent.com"


def load(name: str) -> dict:
    return json.loads((ROLES / name).read_text())


def test_the_subject_template_adds_the_ref():
    # PUT /repos/{owner}/{repo}/actions/oidc/customization/sub (REST "Set the customization
    # template for an OIDC subject claim for a repository").
    assert load("oidc-subject-template.json") == {
        "use_default": False,
        "include_claim_keys": ["repo", "context", "ref"],
    }


def test_the_deploy_role_trusts_the_stacks_environment_on_main_only():
    assert load("deploy-trust.json") == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "GitHubEnvironmentOfTheStackFromMain",
                "Effect": "Allow",
                "Principal": {"Federated": OIDC},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
                        "token.actions.githubusercontent.com:sub": (
                            "repo:<owner>/<repo>:environment:<stack>:ref:refs/heads/main"
                        ),
                    }
                },
            }
        ],
    }


def test_the_preview_role_trusts_pull_requests_only():
    assert load("preview-trust.json") == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "GitHubPullRequestsOfThisRepository",
                "Effect": "Allow",
                "Principal": {"Federated": OIDC},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        "token.actions.githubusercontent.com:aud": "sts.amazonaws.com"
                    },
                    "StringLike": {
                        "token.actions.githubusercontent.com:sub": (
                            "repo:<owner>/<repo>:pull_request:ref:refs/pull/*/merge"
                        )
                    },
                },
            }
        ],
    }


@pytest.mark.parametrize(
    ("subject", "deploy"),
    [
        ("repo:<owner>/<repo>:environment:<stack>:ref:refs/heads/main", True),
        # A pull request's job that names the environment itself.
        ("repo:<owner>/<repo>:environment:<stack>:ref:refs/pull/7/merge", False),
        # Another branch pushed or dispatched with the environment.
        ("repo:<owner>/<repo>:environment:<stack>:ref:refs/heads/feature", False),
        # The default template's subject (the setup command not run): refused, not widened.
        ("repo:<owner>/<repo>:environment:<stack>", False),
    ],
)
def test_which_subjects_the_deploy_role_accepts(subject, deploy):
    (statement,) = load("deploy-trust.json")["Statement"]
    pinned = statement["Condition"]["StringEquals"]["token.actions.githubusercontent.com:sub"]
    assert (subject == pinned) is deploy


# The program's invokes (every token the fixture renders call) -> the AWS actions they need
# (terraform-provider-aws data sources, through pulumi-aws 7.51.1). getPartition and getRegion
# are answered from the provider's configuration (no API call). sts:GetCallerIdentity needs no
# permission (STS API reference) and is listed for clarity.
INVOKE_ACTIONS = {
    "aws:index/getCallerIdentity:getCallerIdentity": {"sts:GetCallerIdentity"},
    "aws:index/getPartition:getPartition": set(),
    "aws:index/getRegion:getRegion": set(),
    "aws:index/getAvailabilityZones:getAvailabilityZones": {"ec2:DescribeAvailabilityZones"},
    "aws:ec2/getSubnet:getSubnet": {"ec2:DescribeSubnets"},
    "aws:iam/getSessionContext:getSessionContext": {"iam:GetRole"},
    "aws:eks/getCluster:getCluster": {"eks:DescribeCluster"},
    "aws:eks/getAccessEntry:getAccessEntry": {"eks:DescribeAccessEntry"},
    "aws:eks/getAddonVersion:getAddonVersion": {"eks:DescribeAddonVersions"},
    # The pre-flight (issue 28): every principal looked up in IAM, the add-on installed on an
    # existing cluster, the EC2 vCPU quotas (terraform-provider-aws
    # internal/service/servicequotas/service_quota_data_source.go: GetServiceQuota, then
    # GetAWSDefaultServiceQuota for a quota never changed in the account).
    "aws:iam/getRole:getRole": {"iam:GetRole"},
    "aws:iam/getUser:getUser": {"iam:GetUser"},
    "aws:eks/getAddon:getAddon": {"eks:DescribeAddon"},
    "aws:servicequotas/getServiceQuota:getServiceQuota": {
        "servicequotas:GetServiceQuota",
        "servicequotas:GetAWSDefaultServiceQuota",
    },
    "aws:ssm/getParameter:getParameter": set(),  # its own, resource-scoped statement
    # The hourly cost from the AWS Price List API (price_list.py; terraform-provider-aws
    # internal/service/pricing/product_data_source.go: GetProducts).
    "aws:pricing/getProduct:getProduct": {"pricing:GetProducts"},
}

# The stack's AWS resource types -> what a `pulumi preview --refresh` reads of them (the
# provider's Read of each type). pulumi-eks's own children (the EKS cluster, its OIDC provider)
# are listed under eks:index:Cluster.
REFRESH_ACTIONS = {
    "aws:cloudwatch/eventRule:EventRule": {"events:DescribeRule", "events:ListTagsForResource"},
    "aws:cloudwatch/eventTarget:EventTarget": {"events:ListTargetsByRule"},
    "aws:ec2/eip:Eip": {"ec2:DescribeAddresses", "ec2:DescribeAddressesAttribute"},
    "aws:ec2/internetGateway:InternetGateway": {"ec2:DescribeInternetGateways"},
    "aws:ec2/launchTemplate:LaunchTemplate": {
        "ec2:DescribeLaunchTemplates",
        "ec2:DescribeLaunchTemplateVersions",
    },
    "aws:ec2/natGateway:NatGateway": {"ec2:DescribeNatGateways"},
    "aws:ec2/placementGroup:PlacementGroup": {"ec2:DescribePlacementGroups"},
    "aws:ec2/route:Route": {"ec2:DescribeRouteTables"},
    "aws:ec2/routeTable:RouteTable": {"ec2:DescribeRouteTables"},
    "aws:ec2/routeTableAssociation:RouteTableAssociation": {"ec2:DescribeRouteTables"},
    "aws:ec2/securityGroup:SecurityGroup": {"ec2:DescribeSecurityGroups"},
    "aws:ec2/subnet:Subnet": {"ec2:DescribeSubnets"},
    "aws:ec2/tag:Tag": {"ec2:DescribeTags"},
    "aws:ec2/vpc:Vpc": {
        "ec2:DescribeVpcs",
        "ec2:DescribeVpcAttribute",
        "ec2:DescribeNetworkAcls",
        "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroups",
    },
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": {"ec2:DescribeSecurityGroupRules"},
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": {"ec2:DescribeSecurityGroupRules"},
    "aws:eks/accessEntry:AccessEntry": {"eks:DescribeAccessEntry"},
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": {"eks:ListAssociatedAccessPolicies"},
    "aws:eks/addon:Addon": {"eks:DescribeAddon"},
    "aws:eks/nodeGroup:NodeGroup": {"eks:DescribeNodegroup"},
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": {"eks:DescribePodIdentityAssociation"},
    "aws:iam/policy:Policy": {"iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyTags"},
    # The EC2 Spot service-linked role the stack creates when absent (issue 28, point 7):
    # terraform-provider-aws internal/service/iam/service_linked_role.go reads it with GetRole.
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": {"iam:GetRole"},
    "aws:iam/role:Role": {
        "iam:GetRole",
        "iam:ListRolePolicies",
        "iam:ListAttachedRolePolicies",
    },
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": {"iam:ListAttachedRolePolicies"},
    "aws:kms/alias:Alias": {"kms:ListAliases"},
    "aws:kms/key:Key": {
        "kms:DescribeKey",
        "kms:GetKeyPolicy",
        "kms:GetKeyRotationStatus",
        "kms:ListResourceTags",
    },
    "aws:sqs/queue:Queue": {"sqs:GetQueueAttributes", "sqs:ListQueueTags"},
    "aws:sqs/queuePolicy:QueuePolicy": {"sqs:GetQueueAttributes"},
    "eks:index:Cluster": {"eks:DescribeCluster", "iam:GetOpenIDConnectProvider"},
}

AMI_PARAMETERS = [
    "arn:<partition>:ssm:<region>::parameter/aws/service/eks/*",
    "arn:<partition>:ssm:<region>::parameter/aws/service/bottlerocket/*",
]


def statements() -> dict[str, dict]:
    return {s["Sid"]: s for s in load("preview-policy.json")["Statement"]}


def test_the_preview_policy_is_the_invokes_the_refresh_reads_and_the_state():
    by_sid = statements()
    assert sorted(by_sid) == [
        "ProgramInvokes",
        "PublicAmiParameters",
        "RefreshReads",
        "StateBucketRead",
    ]
    invokes = set().union(*INVOKE_ACTIONS.values())
    assert by_sid["ProgramInvokes"] == {
        "Sid": "ProgramInvokes",
        "Effect": "Allow",
        "Action": sorted(invokes),
        "Resource": "*",
    }
    assert by_sid["PublicAmiParameters"] == {
        "Sid": "PublicAmiParameters",
        "Effect": "Allow",
        "Action": "ssm:GetParameter",
        "Resource": AMI_PARAMETERS,
    }
    assert by_sid["RefreshReads"] == {
        "Sid": "RefreshReads",
        "Effect": "Allow",
        "Action": sorted(set().union(*REFRESH_ACTIONS.values()) - invokes),
        "Resource": "*",
    }
    assert by_sid["StateBucketRead"] == {
        "Sid": "StateBucketRead",
        "Effect": "Allow",
        "Action": ["s3:GetObject", "s3:ListBucket"],
        "Resource": [
            "arn:<partition>:s3:::<state-bucket>",
            "arn:<partition>:s3:::<state-bucket>/*",
        ],
    }


def test_the_preview_policy_reads_no_data():
    """No action that returns data rather than metadata: no S3 object outside the state
    bucket, no SSM parameter outside /aws/service/, no secret, no decryption, no write."""
    for statement in statements().values():
        actions = statement["Action"]
        actions = [actions] if isinstance(actions, str) else actions
        for action in actions:
            service, name = action.split(":")
            assert service not in ("secretsmanager", "kms") or name in (
                "DescribeKey",
                "GetKeyPolicy",
                "GetKeyRotationStatus",
                "ListAliases",
                "ListResourceTags",
            ), action
            assert name.startswith(("Describe", "Get", "List")), action
            if action == "s3:GetObject":
                assert statement["Sid"] == "StateBucketRead"
            if service == "ssm":
                assert statement["Resource"] == AMI_PARAMETERS


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_invoke_and_aws_resource_type_of_the_renders_is_covered(render_stack, stack):
    recording = render_stack(stack)
    invokes = {token for token, _ in recording.calls if token.startswith("aws:")}
    assert invokes, "the render calls no invoke: the check would be vacuous"
    assert invokes <= set(INVOKE_ACTIONS), sorted(invokes - set(INVOKE_ACTIONS))
    types = {r.type for r in recording.resources if r.type.startswith(("aws:", "eks:"))}
    assert types <= set(REFRESH_ACTIONS), sorted(types - set(REFRESH_ACTIONS))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_ami_parameters_read_are_under_the_scoped_paths(render_stack, stack):
    names = [
        args["name"]
        for token, args in render_stack(stack).calls
        if token == "aws:ssm/getParameter:getParameter"
    ]
    assert names, "no AMI parameter read: the check would be vacuous"
    for name in names:
        assert name.startswith(("/aws/service/eks/", "/aws/service/bottlerocket/")), name
