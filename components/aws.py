"""AWS facts every spec may need: partitions and the regions in them, and the shapes of IAM
principal ARNs, KMS key ARNs and tag keys. Plain data and pure functions, no Pulumi."""

PARTITIONS = {
    "cn-": "aws-cn",
    "us-gov-": "aws-us-gov",
    "us-iso-": "aws-iso",
    "us-isob-": "aws-iso-b",
    "eu-isoe-": "aws-iso-e",
    "us-isof-": "aws-iso-f",
    "eusc-": "aws-eusc",
}
REGION_PATTERN = (
    r"^(us|eu|ap|sa|ca|me|af|il|mx|cn|us-gov|us-iso|us-isob|us-isof|eu-isoe|eusc-[a-z]+)"
    r"-[a-z]+-[0-9]$"
)
# Every partition of PARTITIONS, and "aws".
PARTITION_ALTERNATIVES = "(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc)"
IAM_PRINCIPAL_PATTERN = rf"^arn:{PARTITION_ALTERNATIVES}:iam::[0-9]{{12}}:(role|user)/[\w+=,.@/-]+$"
IAM_SHORTHAND_PATTERN = r"^(role|user)/[\w+=,.@/-]+$"
KMS_KEY_ARN_PATTERN = (
    rf"^arn:{PARTITION_ALTERNATIVES}:kms:[a-z0-9-]+:[0-9]{{12}}:key/[0-9a-f-]{{36}}$"
)
TAG_KEY_PATTERN = r"^[\w .:/=+@-]{1,128}$"
# What an EBS volume's KmsKeyId takes (EC2 API reference, EbsBlockDevice.KmsKeyId: key ID, key
# ARN, alias name or alias ARN); multi-Region key ids start with 'mrk-'.
KMS_KEY_REF_PATTERN = (
    r"^((mrk-[0-9a-f]{32})|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"|(alias/[A-Za-z0-9/_-]{1,250})"
    rf"|(arn:{PARTITION_ALTERNATIVES}:kms:[a-z0-9-]+:[0-9]{{12}}:"
    r"(key/(mrk-[0-9a-f]{32}|[0-9a-f-]{36})|alias/[A-Za-z0-9/_-]{1,250})))$"
)


def kms_region_problem(value: str, region: str, partition: str) -> str | None:
    """Why a KMS key ARN cannot serve a stack in ``region`` (KMS keys are regional: EKS and EBS
    use a key of the resource's own region and partition); ``None`` when it can, or when the
    value is not an ARN (a key id or alias resolves in the stack's region)."""
    parts = value.split(":")
    if len(parts) < 6 or parts[0] != "arn" or parts[2] != "kms":
        return None
    if parts[1] != partition:
        return f"{value!r} is in partition {parts[1]!r}, but region {region} is in {partition!r}"
    if parts[3] != region:
        return f"{value!r} is a key in {parts[3]}; the stack's resources are in {region}"
    return None


def partition_for_region(region: str) -> str:
    """The AWS partition a region belongs to (``aws``, ``aws-cn``, ``aws-us-gov``, ...)."""
    for prefix, partition in PARTITIONS.items():
        if region.startswith(prefix):
            return partition
    return "aws"
