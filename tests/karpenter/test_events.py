"""Karpenter's interruption rules (``eks_gpu_platform.karpenter.events``): upstream's five."""

from eks_gpu_platform.karpenter.events import INTERRUPTION_EVENTS, interruption_rules


def test_interruption_rules_are_upstreams_five():
    assert interruption_rules() == {
        "ScheduledChange": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "SpotInterruption": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Spot Instance Interruption Warning"],
        },
        "Rebalance": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Instance Rebalance Recommendation"],
        },
        "InstanceStateChange": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Instance State-change Notification"],
        },
        "CapacityReservationInterruption": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
        },
    }
    assert len(INTERRUPTION_EVENTS) == 5
