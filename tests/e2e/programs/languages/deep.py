"""A CPython program whose work happens 20 Python calls below main
(hashing and JSON at the bottom): each call adds interpreter frames, so
its stacks need more than 8 KiB of stack copy to reach main
(tests/e2e/languages_test.cpp). Runs for sys.argv[1] seconds (default
1.5)."""
import hashlib
import json
import sys
import time


def digest_records(count):
    text = json.dumps([{"id": i, "name": "x" * 40} for i in range(count)])
    digest = hashlib.sha256(text.encode()).hexdigest()
    return len(json.loads(text)) + len(digest)


def descend(depth):
    if depth == 0:
        return digest_records(50)
    return descend(depth - 1) + 1


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    deadline = time.monotonic() + seconds
    total = 0
    while time.monotonic() < deadline:
        total += descend(20)
    print("total", total)


if __name__ == "__main__":
    main()
