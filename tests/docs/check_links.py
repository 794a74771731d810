#!/usr/bin/env python3
"""Checks the documentation's cross-references against the repository.

  check_links.py [REPOSITORY_ROOT]

- every relative link of every Markdown file leads to a file or folder of
  the repository, and its #anchor to a heading of the target (GitHub's
  heading ids);
- every repository path cited in a Markdown file or in a comment of the
  sources, in backquotes (`compare/paired.cpp`) or after "see"
  (see tests/fuzz/README.md), names a file or folder that exists;
- README.md is under 200 lines;
- no document or comment cites an issue by number or a numbered section
  sign: a reader has neither, only the repository.

Files: those git tracks when the root is a git checkout, else every file
under the root except build folders and node_modules. Prints one line per
problem (file:line: what) and exits 1 when there is any.
"""

import os
import re
import subprocess
import sys
import unicodedata

README_MAX_LINES = 200
SOURCE_SUFFIXES = (".cpp", ".hpp", ".c", ".h", ".py", ".sh", ".build",
                   ".txt", ".yml", ".yaml", ".mjs", ".js")
SOURCE_NAMES = ("Makefile", "meson.build", "meson_options.txt", "rules",
                "control", "runner-ci", "runner-install", "run")
SKIP_DIRS = ("node_modules", ".git")
SECTION_SIGN = "\u00a7"
ISSUE_RE = re.compile(r"\bissues?\s*#?\s*[0-9]+", re.IGNORECASE)
LINK_RE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
BACKQUOTE_RE = re.compile(r"`([^`\n]+)`")
BARE_RE = re.compile(r"(?<![\w./<>$*{-])([A-Za-z0-9_][\w.+-]*(?:/[\w.+-]+)+"
                     r"\.(?:md|cpp|hpp|c|h|py|sh|build|yml|json|txt))\b")
SEE_RE = re.compile(r"\b[Ss]ee\s+(?:also\s+)?([A-Za-z0-9_.][A-Za-z0-9_./+-]*)")
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
PATH_RE = re.compile(r"^\.?[A-Za-z0-9_][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_.+-]+)*/?$")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"],
                             capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        if files:
            return [f for f in files if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for folder, dirs, names in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and
                   not os.path.isdir(os.path.join(folder, d, "meson-private")) and
                   not (rel == "." and (d.startswith(("build", "obj-", "runner-profile")) or
                                        d in ("demo-profile", ".pc")))]
        if rel == "debian":  # the package's sources, not what a build stages
            dirs[:] = [d for d in dirs if d == "source"]
        for name in names:
            files.append(os.path.normpath(os.path.join(rel, name)))
    return files


def is_source(path):
    name = os.path.basename(path)
    if path.startswith("tests/golden/") and not path.endswith(SOURCE_SUFFIXES):
        return False
    return name.endswith(SOURCE_SUFFIXES) or name in SOURCE_NAMES


def read_text(root, path):
    try:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


def comment_lines(path, text):
    """(line number, comment text) of a source file's comments."""
    c_like = path.endswith((".cpp", ".hpp", ".c", ".h", ".mjs", ".js"))
    result = []
    in_block = False
    in_doc = False
    for number, line in enumerate(text.split("\n"), 1):
        if c_like:
            rest = line
            if in_block:
                end = rest.find("*/")
                result.append((number, rest if end < 0 else rest[:end]))
                if end < 0:
                    continue
                in_block = False
                rest = rest[end + 2:]
            code = strip_strings(rest)
            slash = code.find("//")
            block = code.find("/*")
            if block >= 0 and (slash < 0 or block < slash):
                end = rest.find("*/", block + 2)
                result.append((number, rest[block + 2:end if end >= 0 else None]))
                in_block = end < 0
            elif slash >= 0:
                result.append((number, rest[slash + 2:]))
        else:
            if path.endswith(".py") and line.strip().startswith('"""'):
                in_doc = not in_doc if line.count('"""') == 1 else in_doc
                result.append((number, line))
                continue
            if in_doc:
                result.append((number, line))
                if '"""' in line:
                    in_doc = False
                continue
            code = strip_strings(line)
            hash_at = code.find("#")
            if hash_at >= 0:
                result.append((number, line[hash_at + 1:]))
    return result


def strip_strings(line):
    """The line with the insides of its string literals blanked."""
    out = []
    quote = None
    escaped = False
    for ch in line:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
                out.append(ch)
                continue
            out.append(" ")
        else:
            if ch in "\"'":
                quote = ch
            out.append(ch)
    return "".join(out)


def markdown_lines(text):
    """(line number, text) of a Markdown file outside fenced code blocks."""
    result = []
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        match = re.match(r"^(`{3,}|~{3,})", stripped)
        if match:
            if fence is None:
                fence = match.group(1)
                continue
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = None
                continue
        if fence is None:
            result.append((number, line))
    return result


def heading_ids(text):
    """GitHub's ids of a Markdown file's headings (and explicit anchors)."""
    ids = set()
    seen = {}
    for _, line in markdown_lines(text):
        match = HEADING_RE.match(line)
        if match:
            title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))
            slug = ""
            for ch in title.lower():
                if ch in " -_" or unicodedata.category(ch)[0] in "LN":
                    slug += "-" if ch == " " else ch
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            ids.add(slug if count == 0 else "%s-%d" % (slug, count))
        for anchor in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
            ids.add(anchor)
    return ids


class Checker:
    def __init__(self, root):
        self.root = root
        self.files = tracked_files(root)
        self.file_set = set(self.files)
        self.dirs = set()
        for f in self.files:
            parts = f.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
        self.top_dirs = {f.split("/")[0] for f in self.files if "/" in f}
        self.problems = []
        self.ids_cache = {}

    def problem(self, path, line, what):
        self.problems.append("%s:%d: %s" % (path, line, what))

    def exists(self, rel):
        rel = os.path.normpath(rel).rstrip("/")
        return rel in self.file_set or rel in self.dirs

    def anchors(self, rel):
        if rel not in self.ids_cache:
            self.ids_cache[rel] = heading_ids(read_text(self.root, rel) or "")
        return self.ids_cache[rel]

    def check_link(self, path, line, target):
        if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            return  # http:, https:, mailto: ...
        target, _, anchor = target.partition("#")
        if target.startswith("/"):
            rel = target.lstrip("/")
        elif target:
            rel = os.path.normpath(os.path.join(os.path.dirname(path), target))
        else:
            rel = path
        if rel.startswith(".."):
            self.problem(path, line, "link leaves the repository: %s" % target)
            return
        if not self.exists(rel):
            self.problem(path, line, "link to a missing file: %s" % target)
            return
        if anchor and rel.endswith(".md") and anchor not in self.anchors(rel):
            self.problem(path, line, "link to a missing heading: %s#%s" % (target, anchor))

    def looks_like_path(self, token):
        token = token.rstrip(".,:;)")
        if not PATH_RE.match(token) or "/" not in token.rstrip("/"):
            return None
        if token.split("/")[0] not in self.top_dirs:
            return None  # another project's path (tools/perf/...) or no path
        return token

    def check_cited(self, path, line, text):
        cited = [m.group(1) for m in BACKQUOTE_RE.finditer(text)]
        cited += [m.group(1) for m in SEE_RE.finditer(text)]
        cited += [m.group(1) for m in BARE_RE.finditer(BACKQUOTE_RE.sub(" ", text))]
        for token in dict.fromkeys(cited):
            token = self.looks_like_path(token.strip())
            if token and not (self.exists(token) or
                              self.exists(os.path.join(os.path.dirname(path), token))):
                self.problem(path, line, "cites a path that does not exist: %s" % token)

    def check_history(self, path, line, text):
        if SECTION_SIGN in text:
            self.problem(path, line, "cites a numbered section (%s): "
                         "cite a file of the repository or state the fact" % SECTION_SIGN)
        match = ISSUE_RE.search(text)
        if match:
            self.problem(path, line, "cites an issue by number (%r): "
                         "describe the code as it is" % match.group(0))

    def check_markdown(self, path, text):
        for number, line in markdown_lines(text):
            for match in LINK_RE.finditer(line):
                self.check_link(path, number, match.group(1))
            match = REF_DEF_RE.match(line)
            if match:
                self.check_link(path, number, match.group(1))
            self.check_cited(path, number, line)
            self.check_history(path, number, line)

    def check_source(self, path, text):
        for number, comment in comment_lines(path, text):
            self.check_cited(path, number, comment)
            self.check_history(path, number, comment)

    def run(self):
        if "README.md" not in self.file_set:
            self.problem("README.md", 0, "missing")
        for path in self.files:
            if path == "tests/docs/check_links.py":
                continue
            is_md = path.endswith(".md")
            if not is_md and not is_source(path):
                continue
            text = read_text(self.root, path)
            if text is None:
                continue
            if is_md:
                self.check_markdown(path, text)
            else:
                self.check_source(path, text)
            if path == "README.md":
                lines = text.count("\n")
                if lines >= README_MAX_LINES:
                    self.problem(path, lines, "README.md has %d lines, keep it under %d "
                                 "(the rest belongs in docs/)" % (lines, README_MAX_LINES))
        return self.problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    checker = Checker(root)
    problems = checker.run()
    for p in problems:
        print(p)
    if problems:
        print("check_links: %d problem(s) in %d files" % (len(problems), len(checker.files)))
        return 1
    print("check_links: %d files, every link, cited path and README length fine"
          % len(checker.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
