"""KAI v0.17.0's preemption delay on a workload template (pure: dict in, dict out).

The pod grouper reads ``kai.scheduler/preemption-delay`` from the workload's owners, then from
the pod: the first valid Go duration wins, an invalid or negative one is ignored with a log line
(kai-scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/constants/constants.go`` L13,
``plugins/defaultgrouper/default_grouper.go`` L278-298). The Job and Deployment groupers pass
only the top owner (``plugins/job/job_grouper.go`` L51, ``plugins/deployment/
deployment_grouper.go`` L38, so ``default_grouper.go`` L59-62 uses the top owner alone), and a
bare pod is its own top owner: the annotation goes on the workload object's own metadata. What
the delay is and how long it is: ``budget.preemption``.
"""

import copy

PREEMPTION_DELAY_ANNOTATION = "kai.scheduler/preemption-delay"


def with_preemption_delay(workload: dict, delay: str | None) -> dict:
    """``workload`` (a Job, Deployment or Pod) with the annotation set to ``delay`` (a Go
    duration such as ``"490s"``); unchanged for None."""
    if delay is None:
        return workload
    out = copy.deepcopy(workload)
    out["metadata"].setdefault("annotations", {})[PREEMPTION_DELAY_ANNOTATION] = delay
    return out
