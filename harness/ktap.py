#!/usr/bin/env python3
"""KTAP to the verdict's lines, read by the kernel's own KTAP parser.

usage: ktap.py KUNIT_PY PREFIX FILE

FILE holds KTAP: a kernel console log, or the KTAP results of KUnit
suites as the guest copied them from debugfs. KUNIT_PY is the tree's
tools/testing/kunit/kunit.py; its "parse --json" reads FILE. Prints one
line per test case, parameterised cases included:

    PASS|FAIL|SKIP PREFIX<suite>: <case>[: <parameter>]

and a FAIL line of its own when kunit.py found no test, or found the
results wrong in a way no case shows (a missing plan or result line, a
crash): its exit status or its "[ERROR]" lines say so, and are quoted.
"""
import json
import os
import subprocess
import sys
import tempfile


def cases(group, path):
    """(path, status) of every test case below a JSON group."""
    for case in group.get("test_cases", []):
        yield path + [case["name"]], case["status"]
    for sub in group.get("sub_groups", []):
        yield from cases(sub, path + [sub["name"]])


def main():
    kunit_py, prefix, ktap = sys.argv[1], sys.argv[2], sys.argv[3]
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        run = subprocess.run([sys.executable, kunit_py, "parse", f"--json={out}", ktap],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             check=False)
        try:
            with open(out, encoding="utf-8") as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = {}
    finally:
        os.unlink(out)

    n = bad = 0
    for path, status in cases(result, []):
        # The top group is kunit.py's own: the first name is the suite.
        suite, name = path[0], ": ".join(path[1:]) or path[0]
        verdict = {"PASS": "PASS", "SKIP": "SKIP"}.get(status, "FAIL")
        bad += verdict == "FAIL"
        n += 1
        print(f"{verdict} {prefix}{suite}: {name}" + (" # SKIP" if verdict == "SKIP" else ""))
    # kunit.py's exit status misses some of what its parser reports (a
    # missing result line, a test number out of order): its summary counts
    # them as errors.
    errors = [line.split("] ", 1)[-1] for line in run.stdout.splitlines() if "[ERROR]" in line]
    if n == 0:
        print(f"FAIL {prefix}: no KUnit test in the output ({'; '.join(errors)[:200]})")
    elif (run.returncode != 0 or errors) and not bad:
        print(f"FAIL {prefix}: kunit.py parse found the results incomplete "
              f"({'; '.join(errors)[:200]})")


if __name__ == "__main__":
    main()
