"""The JUnit XML and markdown reports of a fixed result list, byte for byte."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from eks_gpu_platform.validate import report
from eks_gpu_platform.validate.core import Result

RESULTS = [
    Result("preflight", "leftovers", "pass", "no objects of older runs"),
    Result("deployment", "controllers-ready", "pass", "13 workloads ready", ("a", "b"), 1.5),
    Result(
        "deployment",
        "objects-match-render/NodePool",
        "fail",
        "1 of 4 NodePool objects differ from the render",
        ('NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered 8, live 16',),
        0.25,
    ),
    Result("capacity", "gpu-spot", "skip", "pool gpu-spot not opted in (--pool)"),
    Result("security", "pipe|cell", "fail", "a <denied> & 'quoted' | reason"),
]

XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="eks-gpu-platform-validate dev 0a1b2c3d" tests="5" failures="2" skipped="1" time="1.750">
  <testsuite name="preflight" tests="1" failures="0" errors="0" skipped="0" time="0.000">
    <testcase classname="dev.preflight" name="leftovers" time="0.000" />
  </testsuite>
  <testsuite name="deployment" tests="2" failures="1" errors="0" skipped="0" time="1.750">
    <testcase classname="dev.deployment" name="controllers-ready" time="1.500">
      <system-out>a
b</system-out>
    </testcase>
    <testcase classname="dev.deployment" name="objects-match-render/NodePool" time="0.250">
      <failure message="1 of 4 NodePool objects differ from the render">1 of 4 NodePool objects differ from the render</failure>
      <system-out>NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered 8, live 16</system-out>
    </testcase>
  </testsuite>
  <testsuite name="capacity" tests="1" failures="0" errors="0" skipped="1" time="0.000">
    <testcase classname="dev.capacity" name="gpu-spot" time="0.000">
      <skipped message="pool gpu-spot not opted in (--pool)" />
    </testcase>
  </testsuite>
  <testsuite name="security" tests="1" failures="1" errors="0" skipped="0" time="0.000">
    <testcase classname="dev.security" name="pipe|cell" time="0.000">
      <failure message="a &lt;denied&gt; &amp; 'quoted' | reason">a &lt;denied&gt; &amp; 'quoted' | reason</failure>
    </testcase>
  </testsuite>
</testsuites>
"""  # noqa: E501

MARKDOWN = """### Validation of `dev` (run `0a1b2c3d`)

dev: 2 passed, 2 failed, 1 skipped

#### preflight

| check | status | reason |
|---|---|---|
| leftovers | pass | no objects of older runs |

#### deployment

| check | status | reason |
|---|---|---|
| controllers-ready | pass | 13 workloads ready |
| objects-match-render/NodePool | fail | 1 of 4 NodePool objects differ from the render |

`objects-match-render/NodePool`:

    NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered 8, live 16

#### capacity

| check | status | reason |
|---|---|---|
| gpu-spot | skip | pool gpu-spot not opted in (--pool) |

#### security

| check | status | reason |
|---|---|---|
| pipe\\|cell | fail | a &lt;denied&gt; &amp; 'quoted' \\| reason |
"""


def test_junit_xml_exact() -> None:
    assert report.junit_xml("dev", "0a1b2c3d", RESULTS) == XML


def test_junit_xml_parses_back_with_the_reasons() -> None:
    root = ET.fromstring(report.junit_xml("dev", "0a1b2c3d", RESULTS).split("\n", 1)[1])
    failure = root.find("testsuite[@name='security']/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "a <denied> & 'quoted' | reason"


def test_markdown_exact() -> None:
    assert report.markdown("dev", "0a1b2c3d", RESULTS) == MARKDOWN


def test_headline() -> None:
    assert report.headline("prod", RESULTS) == "prod: 2 passed, 2 failed, 1 skipped"


def test_write_puts_both_files_in_the_report_dir(tmp_path) -> None:
    xml_path, md_path = report.write(tmp_path / "r", "dev", "0a1b2c3d", RESULTS)
    assert (xml_path.name, md_path.name) == ("validate.xml", "validate.md")
    assert xml_path.read_text() == XML
    assert md_path.read_text() == MARKDOWN


def test_notes_go_under_the_headline_and_into_the_first_suites_properties() -> None:
    notes = ["Price of g6.xlarge in us-west-2: $0.81/h, user-supplied (--price)"]
    assert report.markdown("dev", "0a1b2c3d", RESULTS, notes) == MARKDOWN.replace(
        "dev: 2 passed, 2 failed, 1 skipped\n",
        "dev: 2 passed, 2 failed, 1 skipped\n\n"
        "- Price of g6.xlarge in us-west-2: $0.81/h, user-supplied (--price)\n",
    )
    assert report.junit_xml("dev", "0a1b2c3d", RESULTS, notes) == XML.replace(
        '  <testsuite name="preflight" tests="1" failures="0" errors="0" skipped="0" '
        'time="0.000">\n',
        '  <testsuite name="preflight" tests="1" failures="0" errors="0" skipped="0" '
        'time="0.000">\n'
        "    <properties>\n"
        '      <property name="note.1" value="Price of g6.xlarge in us-west-2: $0.81/h, '
        'user-supplied (--price)" />\n'
        "    </properties>\n",
    )
