#!/usr/bin/env python3
"""Trims an upstream OpenAPI document or CRD to what the strict validator reads.

Usage: trim.py IN OUT. Drops every schema's prose (`description` strings: three quarters of the
bytes) and, from an OpenAPI document, everything but `swagger`, `info` and `definitions` (the
validator never reads `paths`). A property *named* description is a schema (a mapping) and stays.
"""
import json
import sys

import yaml


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items()
                if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        text = f.read()
    if src.endswith(".json"):
        doc = json.loads(text)
        doc = {k: doc[k] for k in ("swagger", "info", "definitions") if k in doc}
        with open(dst, "w", encoding="utf-8") as f:
            json.dump(strip(doc), f, indent=1, ensure_ascii=False)
            f.write("\n")
        return
    docs = [strip(d) for d in yaml.safe_load_all(text) if d is not None]
    with open(dst, "w", encoding="utf-8") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False, width=100, explicit_start=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: trim.py IN OUT")
    main(sys.argv[1], sys.argv[2])
