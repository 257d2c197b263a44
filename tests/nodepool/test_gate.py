"""An EFA pool's gate (``nodepool.component._after``): a value once the zone check has passed,
JSON data through one apply, anything else lifted as ``Output.all`` lifts it."""

import pulumi
import pytest

from eks_gpu_platform.nodepool.component import _after, _json

PLAIN = {"spec": {"limits": {"gpu": 8}, "zones": ["us-west-2a"], "x": [1.5, None, True, ("t",)]}}


def test_what_counts_as_json(run_program):
    found = {}

    def program():
        found["plain"] = _json(PLAIN)
        found["string"] = _json("text")
        found["nested-output"] = _json({"a": {"b": [pulumi.Output.from_input("later")]}})
        found["other-object"] = _json([object()])

    run_program(program)
    assert found == {"plain": True, "string": True, "nested-output": False, "other-object": False}


def test_the_gate_gives_the_value_once_the_check_passes(run_program):
    seen = {}

    def program():
        check = pulumi.Output.secret(["us-west-2a"])
        _after(check, PLAIN).apply(lambda v: seen.__setitem__("plain", v))
        pulumi.export("gated", _after(check, PLAIN))
        nested = {"tags": {"Name": pulumi.Output.from_input("efa")}}
        _after(check, nested).apply(lambda v: seen.__setitem__("nested", v))

    recording = run_program(program)
    assert seen == {"plain": PLAIN, "nested": {"tags": {"Name": "efa"}}}
    # The check's secrecy carries over, as through Output.all.
    assert recording.secret_outputs == {"gated"}


def test_a_failed_check_fails_the_gated_value(run_program):
    def fail(_):
        raise ValueError("zone us-west-2z has no private subnet")

    def program():
        check = pulumi.Output.from_input(["us-west-2z"]).apply(fail)
        pulumi.CustomResource("kubernetes:test/v1:Thing", "thing", {"spec": _after(check, {})})

    with pytest.raises(Exception, match="zone us-west-2z has no private subnet"):
        run_program(program)
