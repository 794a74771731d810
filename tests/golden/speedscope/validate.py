#!/usr/bin/env python3
"""Validates speedscope files (runner report --format speedscope).

usage: validate.py SCHEMA FILE...

Each FILE must validate against SCHEMA (speedscope's published file-format
schema, file-format-schema.json here) and hold what speedscope's importer
needs beyond the schema: every sample's frame indexes are integers inside
shared.frames, and a sampled profile has one weight per sample.

Exit status: 0 all valid; 1 some file invalid (each reason on stderr);
3 python3-jsonschema is not installed (the caller skips its case).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(3)


def consistency_errors(doc):
    frames = len(doc["shared"]["frames"])
    for p, profile in enumerate(doc["profiles"]):
        if profile.get("type") != "sampled":
            continue
        if len(profile["samples"]) != len(profile["weights"]):
            yield f"profiles[{p}]: {len(profile['samples'])} samples but " \
                  f"{len(profile['weights'])} weights"
        for s, stack in enumerate(profile["samples"]):
            for index in stack:
                if not (isinstance(index, int) and 0 <= index < frames):
                    yield f"profiles[{p}].samples[{s}]: frame {index!r} " \
                          f"is not an index of the {frames} shared frames"


def main(schema_path, paths):
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    invalid = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: not JSON: {e}", file=sys.stderr)
            invalid += 1
            continue
        errors = [e.message for e in validator.iter_errors(doc)]
        if not errors:
            errors = list(consistency_errors(doc))
        for message in errors:
            print(f"{path}: {message}", file=sys.stderr)
        invalid += bool(errors)
    return 1 if invalid else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
