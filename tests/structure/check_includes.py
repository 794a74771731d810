#!/usr/bin/env python3
"""The include rules of the parts, checked from their sources and meson.build.

A part is a folder whose meson.build builds a library or a program (base/,
format/, ..., agent/, integrations/<name>/). Its declared dependencies are
the parts whose `<name>_dep` (the declare_dependency of that part's
meson.build) appear in a `dependencies :` list of its meson.build. Every
`#include "x/..."` in a part's sources must name
  - a header of the part itself, or
  - the façade header of a declared dependency (<part>/<name>.hpp, or the
    one FACADES names), never another of its headers;
agent/ may include every part's façade. An include of a folder of the
repository that is not a part (tests/, bench/) is a violation too.

Usage: check_includes.py [--root DIR]   exit 0 when clean, 1 with one
                                         "file:line: why" per violation
       check_includes.py --self-test     checks the checker on a made-up tree
"""

import argparse
import os
import re
import sys
import tempfile

# Parts whose façade is not named after their folder.
FACADES = {
    "integrations/client": ("instrument_hooks.h", "instrument_hooks.hpp"),
    "integrations/results": ("walltime_results.hpp",),
}
# The part that sees every other part's façade.
TOP_PART = "agent"
# Folders with a meson.build that are not parts.
NOT_PARTS = ("tests", "bench", "packaging")
SOURCE_SUFFIXES = (".cpp", ".hpp", ".c", ".h")

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DECLARE_RE = re.compile(r"\b(\w+_dep)\s*=\s*declare_dependency\s*\(")
DEPS_LIST_RE = re.compile(r"\bdependencies\s*:\s*(\[[^\]]*\]|\w+)")
DEP_NAME_RE = re.compile(r"\b(\w+_dep)\b")
TARGET_RE = re.compile(r"\b(static_library|library|executable)\s*\(")


def strip_meson_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def find_parts(root):
    """{part folder: meson.build text} for every folder that builds a target."""
    parts = {}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        if rel != "." and (rel.split("/")[0] in NOT_PARTS
                           or rel.split("/")[0].startswith((".", "build"))):
            dirs[:] = []
            continue
        dirs.sort()
        if rel == "." or "meson.build" not in files:
            continue
        with open(os.path.join(folder, "meson.build"), encoding="utf-8") as f:
            text = strip_meson_comments(f.read())
        if TARGET_RE.search(text):
            parts[rel] = text
    return parts


def dependency_graph(parts):
    """{part: set of parts it declares as dependencies}."""
    owner = {}
    for part, text in parts.items():
        for name in DECLARE_RE.findall(text):
            owner[name] = part
    graph = {}
    for part, text in parts.items():
        deps = set()
        for listed in DEPS_LIST_RE.findall(text):
            for name in DEP_NAME_RE.findall(listed):
                if name in owner and owner[name] != part:
                    deps.add(owner[name])
        graph[part] = deps
    return graph


def facades(part):
    names = FACADES.get(part)
    if names is None:
        names = (part.split("/")[-1].replace("-", "_") + ".hpp",)
    return {part + "/" + name for name in names}


def part_of(path, parts):
    """The part holding the repository path `path` (longest match)."""
    best = None
    for part in parts:
        if path.startswith(part + "/") and (best is None
                                            or len(part) > len(best)):
            best = part
    return best


def check(root):
    """The violations, as "file:line: why" strings."""
    parts = find_parts(root)
    graph = dependency_graph(parts)
    top_folders = {
        name for name in os.listdir(root)
        if os.path.isdir(os.path.join(root, name)) and not name.startswith(".")
    }
    violations = []
    for part in sorted(parts):
        folder = os.path.join(root, part)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            rel_file = part + "/" + name
            with open(os.path.join(folder, name), encoding="utf-8",
                      errors="replace") as f:
                lines = f.read().splitlines()
            for number, line in enumerate(lines, 1):
                match = INCLUDE_RE.match(line)
                if not match or "/" not in match.group(1):
                    continue
                why = judge(part, match.group(1), parts, graph, top_folders)
                if why:
                    violations.append(f"{rel_file}:{number}: {why}")
    return violations


def judge(part, included, parts, graph, top_folders):
    """Why `part` may not include `included` (None when it may)."""
    target = part_of(included, parts)
    if target is None:
        if included.split("/")[0] in top_folders:
            return (f'includes "{included}", which is in no part '
                    f"(a part includes only parts' headers)")
        return None  # a system or generated header
    if target == part:
        return None
    allowed = facades(target)
    if included not in allowed:
        return (f'includes "{included}", a header inside {target}/: only '
                f"its façade {' or '.join(sorted(allowed))} may be included")
    if part != TOP_PART and target not in graph.get(part, set()):
        return (f'includes "{included}", but {target}/ is not among the '
                f"dependencies of {part}/ in {part}/meson.build")
    return None


def write(root, path, text):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    """The checker on a made-up tree: each kind of violation is reported
    with its file and line, and what is allowed is not."""
    lib = ("{0}_lib = static_library('{0}', '{0}.cpp',\n"
           "  dependencies : [{1}])\n"
           "{0}_dep = declare_dependency(link_with : {0}_lib,\n"
           "  dependencies : [{1}])  # not: hidden_dep\n")
    with tempfile.TemporaryDirectory() as root:
        write(root, "meson.build", "project('t')\n")
        write(root, "low/meson.build", lib.format("low", "threads_dep"))
        write(root, "low/low.hpp", "#pragma once\n")
        write(root, "low/detail.hpp", "#pragma once\n")
        write(root, "mid/meson.build", lib.format("mid", "low_dep"))
        write(root, "mid/mid.hpp", '#include "low/low.hpp"\n')
        write(root, "mid/mid.cpp",
              '#include "mid/mid.hpp"\n'
              "#include <vector>\n"
              '#include "config.h"\n'
              '#include "low/detail.hpp"\n'
              '#include "high/high.hpp"\n'
              '#include "tests/support/x.hpp"\n'
              '#include "sys/weird.h"\n')
        write(root, "high/meson.build", lib.format("high", "mid_dep"))
        write(root, "high/high.hpp", '#include "mid/mid.hpp"\n')
        write(root, "high/high.cpp", '#include "low/low.hpp"\n')
        write(root, "agent/meson.build",
              "executable('runner', 'main.cpp', dependencies : [mid_dep])\n")
        write(root, "agent/main.cpp",
              '#include "high/high.hpp"\n#include "mid/mid.hpp"\n'
              '#include "low/detail.hpp"\n')
        write(root, "tests/meson.build", "executable('t', 't.cpp')\n")
        write(root, "tests/t.cpp", '#include "low/detail.hpp"\n')
        write(root, "tests/support/x.hpp", "#pragma once\n")
        got = check(root)
    expected = [
        "agent/main.cpp:3: ",
        "high/high.cpp:1: ",
        "mid/mid.cpp:4: ",
        "mid/mid.cpp:5: ",
        "mid/mid.cpp:6: ",
    ]
    ok = len(got) == len(expected) and all(
        line.startswith(prefix) for line, prefix in zip(got, expected))
    for line in got:
        print("  " + line)
    if not ok:
        print("self-test: FAILED, expected violations at " +
              ", ".join(p.rstrip(": ") for p in expected))
        return 1
    print(f"self-test: the {len(expected)} violations of the made-up tree "
          "are reported, nothing else")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    violations = check(root)
    for line in violations:
        print(line)
    if violations:
        print(f"include rules: {len(violations)} violation(s) "
              "(tests/structure/check_includes.py says the rules)")
        return 1
    parts = find_parts(root)
    print(f"include rules: {len(parts)} parts, each includes only its own "
          "headers and its declared dependencies' façades")
    return 0


if __name__ == "__main__":
    sys.exit(main())
