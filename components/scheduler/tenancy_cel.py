"""CEL pieces of the tenancy pod policy (``tenancy_policies``): GPU requests, the
``NVIDIA_VISIBLE_DEVICES`` rules and the pool rules (pure; strings out).

Messages echo user values through ``esc``: a value with a line break (an env value, an affinity
value) never splits a message (Kubernetes' string library ``replace``; the API server would also
fall back to the static ``message`` for a ``messageExpression`` with a line break).
"""

from collections.abc import Mapping, Sequence

from .constants import EFA_RESOURCE, GPU_RESOURCE, SCHEDULER_NAME
from .tenancy import PoolAccess, QueueTenancy

# The device-plugin resources a pod reaches GPUs or EFA with: ``nvidia.com/gpu`` (whole GPUs, or
# time-sliced replicas under the device plugin's default ``renameByDefault: false``), any other
# ``nvidia.com/gpu.*`` (a renamed shared resource, Bottlerocket's ``nvidia.com/gpu.shared``), MIG
# devices under the mixed strategy (``nvidia.com/mig-<profile>``), and EFA interfaces.
GPU_RESOURCE_TEXT = f"{GPU_RESOURCE}, {GPU_RESOURCE}.*, nvidia.com/mig-* or {EFA_RESOURCE}"
VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
VISIBLE_DEVICES_ALLOWED = ("void", "none")


def cel_str(value: str) -> str:
    """A CEL single-quoted string literal of ``value`` (backslashes and quotes escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def cel_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(cel_str(v) for v in values) + "]"


def esc(expression: str) -> str:
    """CEL: the string ``expression`` with line breaks shown as ``\\n``/``\\r``."""
    return f"{expression}.replace('\\n', '\\\\n').replace('\\r', '\\\\r')"


def _is_gpu(name: str) -> str:
    return (
        f"({name} == '{GPU_RESOURCE}' || {name}.startsWith('{GPU_RESOURCE}.') || "
        f"{name}.startsWith('nvidia.com/mig-') || {name} == '{EFA_RESOURCE}')"
    )


def _requests_gpu(container: str) -> str:
    return (
        f"has({container}.resources) && ((has({container}.resources.requests) && "
        f"{container}.resources.requests.exists(r, {_is_gpu('r')})) || "
        f"(has({container}.resources.limits) && {container}.resources.limits.exists(r, "
        f"{_is_gpu('r')})))"
    )


def gpu_expression() -> str:
    """CEL: the pod requests (or limits) a GPU, MIG, shared-GPU or EFA resource in a container
    or init container (ephemeral containers have no resources)."""
    return (
        f"object.spec.containers.exists(c, {_requests_gpu('c')}) || "
        f"(has(object.spec.initContainers) && object.spec.initContainers.exists(c, "
        f"{_requests_gpu('c')}))"
    )


def _bad_env(e: str) -> str:
    return (
        f"{e}.name == '{VISIBLE_DEVICES}' && (has({e}.valueFrom) || !((has({e}.value) ? "
        f"{e}.value : '') in {cel_list(VISIBLE_DEVICES_ALLOWED)}))"
    )


def _env_offenders(containers: str) -> str:
    """CEL: '<container>=<value>' of each container of ``containers`` setting the variable."""
    text = esc("(has(e.value) ? e.value : '')")
    value = f"(has(e.valueFrom) ? '<valueFrom>' : {text})"
    return (
        f"{containers}.filter(c, has(c.env) && c.env.exists(e, {_bad_env('e')}))"
        f".map(c, c.name + '=' + c.env.filter(e, {_bad_env('e')}).map(e, {value}).join(','))"
    )


_LISTS = (
    ("object.spec.containers", None),
    ("object.spec.initContainers", "has(object.spec.initContainers)"),
    ("object.spec.ephemeralContainers", "has(object.spec.ephemeralContainers)"),
)


def tolerates(key: str, value: str, effect: str) -> str:
    """CEL: the pod tolerates the taint by its key (kubernetes v1.36.3 pkg/apis/core/v1/helper
    ``ToleratesTaint``: an empty effect matches every effect, ``Exists`` any value, else
    ``Equal`` (the default) the value). A toleration without a key tolerates every taint, and
    ``platform-tenant-tolerations`` (guardrails.py), deployed with these policies, refuses it in
    the same namespaces: counting it here too would only give one pod two refusals."""
    return (
        "(has(object.spec.tolerations) && object.spec.tolerations.exists(t, has(t.key) && "
        f"t.key == '{key}' && ((has(t.operator) && t.operator == 'Exists') || "
        f"(has(t.value) ? t.value : '') == '{value}') && "
        f"(!has(t.effect) || t.effect == '' || t.effect == '{effect}')))"
    )


def visible_devices_validations() -> list[dict]:
    """No ``NVIDIA_VISIBLE_DEVICES`` but void/none in a pod requesting no GPU; no ``envFrom`` of
    a ConfigMap or Secret in such a pod when it tolerates the GPU taint (it could run on a GPU
    node, and what the ConfigMap holds cannot be read here)."""
    bad = " || ".join(
        (f"({guard} && " if guard else "(")
        + f"{lst}.exists(c, has(c.env) && c.env.exists(e, {_bad_env('e')})))"
        for lst, guard in _LISTS
    )
    offenders = " + ' ' + ".join(
        (f"({guard} ? " if guard else "(")
        + f"{_env_offenders(lst)}.join(' ')"
        + (" : '')" if guard else ")")
        for lst, guard in _LISTS
    )
    env_from = " || ".join(
        (f"({guard} && " if guard else "(")
        + f"{lst}.exists(c, has(c.envFrom) && c.envFrom.exists(f, has(f.configMapRef) || "
        "has(f.secretRef))))"
        for lst, guard in _LISTS
    )
    gpu_taint = tolerates(GPU_RESOURCE, "true", "NoSchedule")
    return [
        {
            "expression": f"({gpu_expression()}) || !({bad})",
            "messageExpression": "'GPU visibility: pod ' + object.metadata.name + ' requests no "
            f"GPU but sets {VISIBLE_DEVICES} (container=value: ' + ({offenders}).trim() + "
            f"'); allowed: {VISIBLE_DEVICES} unset, void or none, by value (valueFrom cannot be "
            "checked)'",
            "message": f"GPU visibility: a pod requesting no GPU may set {VISIBLE_DEVICES} only "
            "to void or none, by value",
            "reason": "Forbidden",
        },
        {
            "expression": f"({gpu_expression()}) || !{gpu_taint} || !({env_from})",
            "messageExpression": "'GPU visibility: pod ' + object.metadata.name + ' requests no "
            f"GPU, tolerates the {GPU_RESOURCE} taint and takes environment variables from a "
            f"ConfigMap or Secret (envFrom), which could set {VISIBLE_DEVICES}; allowed: env "
            f"entries by value, or request a GPU with schedulerName {SCHEDULER_NAME}'",
            "message": f"GPU visibility: a pod requesting no GPU that tolerates the "
            f"{GPU_RESOURCE} taint may not use envFrom",
            "reason": "Forbidden",
        },
    ]


def pool_variables(
    *,
    queues: Sequence[QueueTenancy],
    forbidden: Mapping[str, Sequence[PoolAccess]],
    pools: Sequence[PoolAccess],
) -> list[dict]:
    """The pod policy's pool variables: the queue's forbidden pool and NodePool names, its own
    pools (for messages), and the forbidden tainted pools whose every taint the pod tolerates."""

    def table(values: Mapping[str, Sequence[str]]) -> str:
        body = ", ".join(f"{cel_str(k)}: {cel_list(v)}" for k, v in values.items())
        return "{" + body + "}"

    def lookup(text: str) -> str:
        return f"(variables.queue in {text} ? {text}[variables.queue] : [])"

    names = table({q.queue: [p.name for p in forbidden[q.queue]] for q in queues})
    nodepools = table(
        {q.queue: [n for p in forbidden[q.queue] for n in p.nodepools] for q in queues}
    )
    own = table({q.queue: list(q.pools) for q in queues})
    tainted = [p for p in pools if p.taints]
    reach = (
        " || ".join(
            f"(p == {cel_str(p.name)} && "
            + " && ".join(tolerates(t["key"], t.get("value", ""), t["effect"]) for t in p.taints)
            + ")"
            for p in tainted
        )
        or "false"
    )
    return [
        {"name": "forbiddenPools", "expression": lookup(names)},
        {"name": "forbiddenNodePools", "expression": lookup(nodepools)},
        {"name": "ownPools", "expression": f"{lookup(own)}.join(', ')"},
        {"name": "reached", "expression": f"variables.forbiddenPools.filter(p, {reach})"},
    ]


def pod_pool_validations(*, pool_label_key: str, nodepool_label_key: str) -> list[dict]:
    """No selection (nodeSelector, required or preferred node affinity ``In``) of a pool or
    NodePool routed to other queues only; and a pod tolerating every taint of such a pool must
    restrict itself to pools by label (nodeSelector, or an ``In`` on the pool or NodePool label in
    every required term), whose values the first rules judge."""
    pk, nk = cel_str(pool_label_key), cel_str(nodepool_label_key)
    ns = "object.spec.nodeSelector"
    na = "object.spec.affinity.nodeAffinity"
    required = f"{na}.requiredDuringSchedulingIgnoredDuringExecution"
    preferred = f"{na}.preferredDuringSchedulingIgnoredDuringExecution"
    has_na = "has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity)"

    def in_terms(key: str, var: str) -> str:
        expr = f"e.key == {key} && e.operator == 'In' && has(e.values) && {var} in e.values"
        return (
            f"(({has_na} && has({required}) && {required}.nodeSelectorTerms.exists(t, "
            f"has(t.matchExpressions) && t.matchExpressions.exists(e, {expr}))) || ({has_na} "
            f"&& has({preferred}) && {preferred}.exists(p, has(p.preference.matchExpressions) "
            f"&& p.preference.matchExpressions.exists(e, {expr}))))"
        )

    selected = (
        f"variables.forbiddenPools.filter(x, {in_terms(pk, 'x')}) + "
        f"variables.forbiddenNodePools.filter(x, {in_terms(nk, 'x')})"
    )
    restricted = (
        f"((has({ns}) && ({pk} in {ns} || {nk} in {ns})) || ({has_na} && has({required}) && "
        f"{required}.nodeSelectorTerms.all(t, has(t.matchExpressions) && "
        f"t.matchExpressions.exists(e, e.key in [{pk}, {nk}] && e.operator == 'In'))))"
    )
    allowed = (
        "; allowed: the queue\\'s pools ' + variables.ownPools + ' (label "
        f"{pool_label_key}), or a pool no queue is routed to'"
    )
    selector_value = (
        f"({pk} in {ns} && {ns}[{pk}] in variables.forbiddenPools ? "
        f"'{pool_label_key}=' + {ns}[{pk}] : '{nodepool_label_key}=' + {ns}[{nk}])"
    )
    return [
        {
            "expression": f"!has({ns}) || ((!({pk} in {ns}) || !({ns}[{pk}] in "
            f"variables.forbiddenPools)) && (!({nk} in {ns}) || !({ns}[{nk}] in "
            "variables.forbiddenNodePools)))",
            "messageExpression": "'pools: pod ' + object.metadata.name + ' selects ' + "
            f"{esc(selector_value)} + ' (nodeSelector), a pool of another queue" + allowed,
            "message": "pools: the pod's nodeSelector names a pool routed to another queue",
            "reason": "Forbidden",
        },
        {
            "expression": f"({selected}).size() == 0",
            "messageExpression": "'pools: pod ' + object.metadata.name + ' selects ' + "
            f"({selected}).join(', ') + ' in its node affinity (In on {pool_label_key} or "
            f"{nodepool_label_key}), a pool of another queue" + allowed,
            "message": "pools: the pod's node affinity names a pool routed to another queue",
            "reason": "Forbidden",
        },
        {
            "expression": f"variables.reached.size() == 0 || {restricted}",
            "messageExpression": "'pools: pod ' + object.metadata.name + ' tolerates every "
            "taint of ' + variables.reached.join(', ') + ', routed to other queues, without "
            f"selecting its pools; add nodeSelector {pool_label_key} (or a required node "
            "affinity In on it)" + allowed,
            "message": "pools: the pod tolerates another queue's pool's taints without "
            "selecting its own pools",
            "reason": "Forbidden",
        },
    ]
