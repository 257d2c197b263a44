"""Karpenter's interruption handling: the SQS queue's settings and the five EventBridge rules
(upstream's) that feed it. Pure: data in, dict out."""

QUEUE_RETENTION_SECONDS = 300
QUEUE_TARGET_ID = "KarpenterInterruptionQueueTarget"
# The five EventBridge rules (upstream logical ids without "Rule"), each a source and detail-type.
INTERRUPTION_EVENTS: dict[str, tuple[str, str]] = {
    "ScheduledChange": ("aws.health", "AWS Health Event"),
    "SpotInterruption": ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    "Rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    "InstanceStateChange": ("aws.ec2", "EC2 Instance State-change Notification"),
    "CapacityReservationInterruption": (
        "aws.ec2",
        "EC2 Capacity Reservation Instance Interruption Warning",
    ),
}


def interruption_rules() -> dict[str, dict]:
    """The EventBridge event pattern of each interruption rule, keyed by rule."""
    return {
        key: {"source": [source], "detail-type": [detail]}
        for key, (source, detail) in INTERRUPTION_EVENTS.items()
    }
