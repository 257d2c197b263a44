"""The run's reports: ``validate.xml`` (JUnit XML) and ``validate.md`` (markdown, usable as the
deploy job's ``$GITHUB_STEP_SUMMARY`` or a pull-request comment).

JUnit: one ``<testsuite>`` per phase (in run order), one ``<testcase>`` per check;
``<failure message=reason>`` or ``<skipped message=reason>``, the details in ``<system-out>``.
Markdown: the headline (``dev: 14 passed, 1 failed, 3 skipped``), the run's notes (the prices
given with ``--price``, "user-supplied"; in JUnit the first suite's ``<properties>``), then per
phase a table of check, status and reason, and the details of every check that did not pass as
an indented (code) block under its name.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from .core import FAIL, PASS, SKIP, Result

XML_NAME = "validate.xml"
MD_NAME = "validate.md"


def _phases(results: Sequence[Result]) -> dict[str, list[Result]]:
    out: dict[str, list[Result]] = {}
    for r in results:
        out.setdefault(r.phase, []).append(r)
    return out


def _count(results: Sequence[Result], status: str) -> int:
    return sum(r.status == status for r in results)


def headline(stack: str, results: Sequence[Result]) -> str:
    return (
        f"{stack}: {_count(results, PASS)} passed, {_count(results, FAIL)} failed, "
        f"{_count(results, SKIP)} skipped"
    )


def _seconds(results: Sequence[Result]) -> str:
    return f"{sum(r.seconds for r in results):.3f}"


def junit_xml(stack: str, run_id: str, results: Sequence[Result], notes: Sequence[str] = ()) -> str:
    root = ET.Element(
        "testsuites",
        {
            "name": f"eks-gpu-platform-validate {stack} {run_id}",
            "tests": str(len(results)),
            "failures": str(_count(results, FAIL)),
            "skipped": str(_count(results, SKIP)),
            "time": _seconds(results),
        },
    )
    for index, (phase, checks) in enumerate(_phases(results).items()):
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": phase,
                "tests": str(len(checks)),
                "failures": str(_count(checks, FAIL)),
                "errors": "0",
                "skipped": str(_count(checks, SKIP)),
                "time": _seconds(checks),
            },
        )
        if notes and index == 0:
            # the run's notes (user-supplied prices) as properties of the first suite (preflight)
            props = ET.SubElement(suite, "properties")
            for number, note in enumerate(notes, 1):
                ET.SubElement(props, "property", {"name": f"note.{number}", "value": note})
        for r in checks:
            case = ET.SubElement(
                suite,
                "testcase",
                {"classname": f"{stack}.{phase}", "name": r.name, "time": f"{r.seconds:.3f}"},
            )
            if r.status == FAIL:
                ET.SubElement(case, "failure", {"message": r.reason}).text = r.reason
            elif r.status == SKIP:
                ET.SubElement(case, "skipped", {"message": r.reason})
            if r.details:
                ET.SubElement(case, "system-out").text = "\n".join(r.details)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _cell(text: str) -> str:
    # A table cell: no pipe, no line break, no raw HTML (GitHub drops unknown tags).
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(stack: str, run_id: str, results: Sequence[Result], notes: Sequence[str] = ()) -> str:
    lines = [f"### Validation of `{stack}` (run `{run_id}`)", "", headline(stack, results)]
    if notes:
        lines += ["", *(f"- {_cell(note)}" for note in notes)]
    for phase, checks in _phases(results).items():
        lines += ["", f"#### {phase}", "", "| check | status | reason |", "|---|---|---|"]
        lines += [f"| {_cell(r.name)} | {r.status} | {_cell(r.reason)} |" for r in checks]
        for r in checks:
            if r.status != PASS and r.details:
                lines += ["", f"`{r.name}`:", ""]
                lines += [f"    {line}" for line in r.details]
    return "\n".join(lines) + "\n"


def write(
    directory: str | Path,
    stack: str,
    run_id: str,
    results: Sequence[Result],
    notes: Sequence[str] = (),
) -> tuple[Path, Path]:
    """Write both reports into ``directory`` (created); returns their paths. ``notes`` (the
    user-supplied prices) go under the markdown headline and into the JUnit properties."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    xml_path, md_path = out / XML_NAME, out / MD_NAME
    xml_path.write_text(junit_xml(stack, run_id, results, notes))
    md_path.write_text(markdown(stack, run_id, results, notes))
    return xml_path, md_path
