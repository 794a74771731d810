#!/usr/bin/env python3
"""Prints the ninja targets that the tests of the given suites need (their
executables and the targets they depend on), so that a build directory used
only for those suites (the sanitizer build in .ci/run) builds nothing else.

usage: suite_targets.py BUILD_DIR SUITE...
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", build, what],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    build, suites = sys.argv[1], set(sys.argv[2:])
    root = os.path.realpath(build)
    files = {t["id"]: t["filename"] for t in introspect(build, "--targets")}
    wanted = set()
    for test in introspect(build, "--tests"):
        if not suites & {s.split(":")[-1] for s in test["suite"]}:
            continue
        paths = [test["cmd"][0]]
        for dep in test["depends"]:
            paths += files.get(dep, [])
        for path in paths:
            path = os.path.realpath(path)
            if path.startswith(root + os.sep):
                wanted.add(os.path.relpath(path, root))
    print("\n".join(sorted(wanted)))


if __name__ == "__main__":
    main()
