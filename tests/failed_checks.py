#!/usr/bin/env python3
"""The failed checks of a `meson test` run, in a few lines.

    tests/failed_checks.py BUILD/meson-logs/testlog.txt

`make test` prints this after the list of skipped cases when a suite
failed, so that the end of the output (all a CI log view may show) names
each failed doctest check: its test case, its file and line, the
expression and the values it had. Each line is cut at 300 characters and
at most 40 lines are printed; the log itself holds the rest.
"""
import re
import sys

kMaxLines = 40
kMaxWidth = 300


def clip(line):
    line = line.rstrip("\n")
    return line if len(line) <= kMaxWidth else line[:kMaxWidth] + " [...]"


def failed_checks(lines):
    out, case, shown_case = [], "", ""
    for i, line in enumerate(lines):
        if line.startswith("TEST CASE:"):
            case = line[len("TEST CASE:"):].strip()
        if not re.search(r":\d+: (FATAL )?ERROR: ", line):
            continue
        if case != shown_case:
            out.append("in \"" + case + "\":")
            shown_case = case
        out.append("  " + clip(line.strip()))
        if i + 1 < len(lines) and lines[i + 1].strip().startswith("values:"):
            out.append("    " + clip(lines[i + 1].strip()))
    return out


def main():
    try:
        with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
            lines = log.readlines()
    except (IndexError, OSError) as error:
        print("failed_checks: cannot read the test log:", error)
        return 0
    found = failed_checks(lines)
    if not found:
        return 0
    print("failed checks (the whole output is in %s):" % sys.argv[1])
    for line in found[:kMaxLines]:
        print(line)
    if len(found) > kMaxLines:
        print("... and %d more lines" % (len(found) - kMaxLines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
