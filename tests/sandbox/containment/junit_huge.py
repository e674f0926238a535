"""Leave fixbot a report as big as the file size limit allows, and never let pytest write one."""

import os

from probe import CASE, record

CASE_XML = '<testcase classname="c" name="t{}"><failure message="m">x</failure></testcase>'


def attack():
    budget = CASE["report_mb"] * 1024 * 1024
    written = 0
    with open("/fixbot-out/junit.xml", "w") as handle:
        handle.write("<testsuite>")
        n = 0
        while written < budget:
            chunk = "".join(CASE_XML.format(n + i) for i in range(1000))
            handle.write(chunk)
            written += len(chunk)
            n += 1000
        handle.write("</testsuite>")
    record(report_bytes=written)
    os._exit(1)
