"""AWS facts every spec may need: partitions and the regions in them, and the shapes of IAM
principal ARNs, KMS key ARNs and tag keys. Plain data and pure functions, no Pulumi."""

PARTITIONS = {
    "cn-": "aws-cn",
    "us-gov-": "aws-us-gov",
    "us-iso-": "aws-iso",
    "us-isob-": "aws-iso-b",
}
REGION_PATTERN = r"^(us|eu|ap|sa|ca|me|af|il|mx|cn|us-gov|us-iso|us-isob)-[a-z]+-[0-9]$"
IAM_PRINCIPAL_PATTERN = (
    r"^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):iam::[0-9]{12}:(role|user)/[\w+=,.@/-]+$"
)
IAM_SHORTHAND_PATTERN = r"^(role|user)/[\w+=,.@/-]+$"
KMS_KEY_ARN_PATTERN = (
    r"^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]{36}$"
)
TAG_KEY_PATTERN = r"^[\w .:/=+@-]{1,128}$"


def partition_for_region(region: str) -> str:
    """The AWS partition a region belongs to (``aws``, ``aws-cn``, ``aws-us-gov``, ...)."""
    for prefix, partition in PARTITIONS.items():
        if region.startswith(prefix):
            return partition
    return "aws"
