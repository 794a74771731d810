"""A CPU-bound Python program with named functions, JSON parsing and
regular expressions (tests/e2e/languages_test.cpp, bench/languages/).
Runs for sys.argv[1] seconds (default 1.5)."""
import json
import re
import sys
import time

TAG = re.compile(r"^([a-z]+)-(\d+)$")


def make_document(count):
    return json.dumps([{"id": i, "name": "record %d" % i,
                        "tags": ["alpha-%d" % i, "beta-%d" % (i * 7),
                                 "Gamma%d" % i]} for i in range(count)])


def parse_document(text):
    return json.loads(text)


def score_tags(tags):
    score = 0
    for tag in tags:
        m = TAG.match(tag)
        if m is not None:
            score += len(m.group(1)) + int(m.group(2)) % 13
    return score


def fibonacci(n):
    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)


def score_document(records):
    total = 0
    for record in records:
        total += score_tags(record["tags"])
    return total + fibonacci(12)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    text = make_document(200)
    deadline = time.monotonic() + seconds
    total = 0
    while time.monotonic() < deadline:
        total += score_document(parse_document(text))
    print("total", total)


if __name__ == "__main__":
    main()
