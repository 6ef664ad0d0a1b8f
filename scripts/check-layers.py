#!/usr/bin/env python3
"""Checks that every #include "..." in the C++ sources goes down the layer table, never up.

The layers (CONTRIBUTING.md, "Layers and what each may include"), lowest first. A file may include
headers of its own folder and of folders with a lower rank. CMake enforces the same table at
build time (each layer library sees only its own and lower folders; tests/layers probes it);
this script checks every file, including headers no probe compiles, and prints the folder graph.

Usage: scripts/check-layers.py [--root DIR] [--graph-only]
  --root DIR     the tree to check (default: this repository)
  --graph-only   print the folder include graph and do not check it (e.g. for an old tree)
Exit status: 0 when every include goes down (or sideways within a folder), 1 otherwise.
"""
import argparse
import os
import re
import sys
from collections import defaultdict

# (rank, folder, what it owns) -- lowest first. Keep in step with CMakeLists.txt and CONTRIBUTING.md.
LAYERS = [
    (0, "sim/util", "generic helpers: strings, FNV-1a, units, the UserError base"),
    (1, "sim/core", "the engine: event queues, simulator, max-min solver, statistics, random streams"),
    (2, "sim/io", "generic HDF5 file wrapper, atomic result-file writing"),
    (3, "models/gpu", "physics: Device, KernelRun, device models of each sharing strategy, profile data, MIG placement"),
    (4, "models/config", "input vocabulary: InputError, device-profile files, MIG layout names"),
    (5, "models/strategies", "the strategy registry and each strategy's configuration"),
    (5, "models/workload", "what a tenant runs: kernel/workload specs, the catalog's model, LLM cards, "
     "the trace model, arrival processes, batching policies"),
    (6, "models/scenario", "scenario types, loader, emitter, resolver, trace readers, compare variants"),
    (7, "models/run", "the runner and its result types"),
    (8, "models/output", "result files and tables: JSON, HDF5, text"),
    (9, "models/plan", "capacity planning"),
    (9, "models/cluster", "node pools, device-plugin/mig-parted/GKE configs, pods, the cluster scheduler"),
    (10, "models/app", "the front end: application layer, command-line program"),
    (11, "python", "pybind11 bindings (clients of models/app)"),
    (11, "bench", "benchmarks"),
]
SOURCE_DIRS = ["sim", "models", "python", "bench"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path, root):
    """The layer folder of a repository-relative path, or None."""
    best = None
    for _, folder, _ in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def scan(root):
    """{(source folder, included folder)} edges with one example each, and problems found."""
    edges = defaultdict(list)
    unknown = []
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                source = folder_of(path, root) or os.path.dirname(path)
                for header in INCLUDE.findall(text):
                    if not os.path.exists(os.path.join(root, header)):
                        # a header beside the file ("foo.hpp") or a generated one
                        if os.path.exists(os.path.join(dirpath, header)):
                            continue
                        unknown.append(f"{path}: #include \"{header}\" is not a path from the repository root")
                        continue
                    target = folder_of(header, root) or os.path.dirname(header)
                    edges[(source, target)].append(f"{path} -> {header}")
    return edges, unknown


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--graph-only", action="store_true")
    args = parser.parse_args()
    rank = {folder: r for r, folder, _ in LAYERS}
    edges, unknown = scan(args.root)

    graph = defaultdict(set)
    for source, target in edges:
        if source != target:
            graph[source].add(target)
    print("folder include graph (folder -> folders it includes):")
    order = sorted(set(graph) | {t for ts in graph.values() for t in ts},
                   key=lambda f: (rank.get(f, 99), f))
    for folder in order:
        targets = sorted(graph.get(folder, ()), key=lambda f: (rank.get(f, 99), f))
        print(f"  {folder} -> {', '.join(targets) if targets else '(nothing)'}")
    if args.graph_only:
        return 0

    problems = list(unknown)
    for (source, target), examples in sorted(edges.items()):
        if source == target:
            continue
        if source not in rank:
            problems.append(f"{source}: folder not in the layer table (scripts/check-layers.py LAYERS): {examples[0]}")
        elif target not in rank:
            problems.append(f"{target}: folder not in the layer table: {examples[0]}")
        elif rank[target] >= rank[source]:
            problems.append(f"upward include ({source} may not include {target}): " + "; ".join(examples))
    if problems:
        print(f"\n{len(problems)} layering problem(s):")
        for p in problems:
            print(f"  {p}")
        return 1
    print("\nevery include goes down the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
