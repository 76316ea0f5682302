"""JUnit XML as CI systems render it: one test suite per rule, one test case per rule and
cluster that passed, one failing test case per finding, and skipped test cases for what
could not be evaluated (never counted as passed)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from fluxgraph.engine import Report
from fluxgraph.findings import Finding


def render_junit(report: Report, color: bool = False) -> str:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        by_rule[f.rule].append(f)
    root = ET.Element("testsuites", name="fluxgraph")
    total_tests = total_failures = total_skipped = 0
    for rid in report.rules_run:
        findings = by_rule.get(rid, [])
        suite = ET.SubElement(root, "testsuite", name=rid)
        tests = failures = 0
        failed_clusters = {f.cluster for f in findings}
        for cluster in report.clusters:
            if cluster not in failed_clusters:
                ET.SubElement(suite, "testcase", classname=rid, name=f"{cluster}: no {rid}")
                tests += 1
        for f in findings:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=rid,
                name=f.location.file_line,
                file=f.location.file,
                line=str(f.location.line),
            )
            fail = ET.SubElement(case, "failure", message=f.headline, type=f.severity.value)
            fail.text = "\n".join(
                [f"{f.severity.value}: {f.headline}", f"  at {f.location}", *(f"  {n.label.value}: {n.as_text()}" for n in f.notes)]
            )
            tests += 1
            failures += 1
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        total_tests += tests
        total_failures += failures
    if report.not_evaluated:
        suite = ET.SubElement(root, "testsuite", name="not-evaluated")
        for p in report.not_evaluated:
            case = ET.SubElement(
                suite, "testcase", classname="not-evaluated", name=p.location.file_line, file=p.location.file
            )
            ET.SubElement(case, "skipped", message=p.message)
        n = len(report.not_evaluated)
        suite.set("tests", str(n))
        suite.set("failures", "0")
        suite.set("errors", "0")
        suite.set("skipped", str(n))
        total_tests += n
        total_skipped += n
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    root.set("skipped", str(total_skipped))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
