#!/usr/bin/env python3
"""Minimal kustomize renderer: a FALLBACK for check.sh when `kubectl kustomize` is not installed.

Supports exactly the features deploy/k8s uses: `resources` (files and directories, recursively),
`namespace`, `images` (newName/newTag), `secretGenerator` with `literals` (no name hash suffix),
and `patches` with a `path` to a strategic-merge patch (maps merged, lists of named items merged by
`name`, other lists replaced). It is not kustomize: check.sh prefers `kubectl kustomize`.

usage: render_kustomize.py DIR > rendered.yaml
"""
import base64
import copy
import os
import sys

import yaml


def merge(base, patch):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    if (isinstance(base, list) and isinstance(patch, list)
            and all(isinstance(x, dict) and "name" in x for x in base + patch)
            and base and patch):
        out = [copy.deepcopy(x) for x in base]
        for item in patch:
            for i, old in enumerate(out):
                if old["name"] == item["name"]:
                    out[i] = merge(old, item)
                    break
            else:
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(patch)


def set_images(obj, images):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "image" and isinstance(v, str):
                name = v.split(":")[0]
                for img in images:
                    if img["name"] == name:
                        obj[k] = f"{img.get('newName', name)}:{img.get('newTag', 'latest')}"
            else:
                set_images(v, images)
    elif isinstance(obj, list):
        for x in obj:
            set_images(x, images)


def render(directory):
    with open(os.path.join(directory, "kustomization.yaml"), encoding="utf-8") as f:
        k = yaml.safe_load(f)
    docs = []
    for res in k.get("resources", []):
        path = os.path.join(directory, res)
        if os.path.isdir(path):
            docs.extend(render(path))
        else:
            with open(path, encoding="utf-8") as f:
                docs.extend(d for d in yaml.safe_load_all(f) if d)
    for gen in k.get("secretGenerator", []):
        data = {}
        for lit in gen.get("literals", []):
            key, _, value = lit.partition("=")
            data[key] = base64.b64encode(value.encode()).decode()
        meta = {"name": gen["name"]}
        labels = gen.get("options", {}).get("labels")
        if labels:
            meta["labels"] = labels
        docs.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                     "metadata": meta, "data": data})
    for p in k.get("patches", []):
        with open(os.path.join(directory, p["path"]), encoding="utf-8") as f:
            patch = yaml.safe_load(f)
        hits = [i for i, d in enumerate(docs)
                if d["kind"] == patch["kind"] and d["metadata"]["name"] == patch["metadata"]["name"]]
        if len(hits) != 1:
            sys.exit(f"patch {p['path']}: {len(hits)} targets")
        docs[hits[0]] = merge(docs[hits[0]], patch)
    if "images" in k:
        set_images(docs, k["images"])
    if "namespace" in k:
        for d in docs:
            if d["kind"] != "Namespace":
                d["metadata"]["namespace"] = k["namespace"]
    return docs


if __name__ == "__main__":
    yaml.safe_dump_all(render(sys.argv[1]), sys.stdout, sort_keys=False)
