#!/usr/bin/env python3
"""The import graph between the crate's top-level modules (issue 18).

Reads every `crate::NAME` path in src/ (use lines and inline paths, tests included) and
fails (exit 1) when two top-level modules import each other, directly or through a
circle, or when a forbidden edge exists (`provider -> preset`). `--dot` prints the graph.

    python3 scripts/module-graph.py [--dot]
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
FORBIDDEN = [
    ("provider", "preset"),
    ("endpoint", "preset"),
    ("endpoint", "provider"),
    # Tools never import the prompt; dialects never reach the transport.
    ("tools", "prompt"),
    ("provider", "client"),
    # Running a program safely sits below the tools and the prompt that use it.
    ("process", "tools"),
    ("process", "prompt"),
    # The run journey sits above what it drives: nothing it uses reaches back up.
    ("project", "run"),
    ("testing", "run"),
    ("agent", "run"),
    ("client", "run"),
    ("tools", "run"),
    ("transcript", "run"),
]
# `lib.rs` and `main.rs` re-export and start things: they are the top, not a module.
SKIP = {"lib", "main"}


def top_modules():
    mods = set()
    for entry in os.listdir(ROOT):
        name, ext = os.path.splitext(entry)
        if ext == ".rs" or os.path.isdir(os.path.join(ROOT, entry)):
            if name not in SKIP:
                mods.add(name)
    return mods


def files_of(mod):
    single = os.path.join(ROOT, mod + ".rs")
    if os.path.isfile(single):
        yield single
    folder = os.path.join(ROOT, mod)
    if os.path.isdir(folder):
        for dirpath, _, names in os.walk(folder):
            for n in names:
                if n.endswith(".rs"):
                    yield os.path.join(dirpath, n)


PATH = re.compile(r"\bcrate::(\w+)")
# `use crate::{a::X, b::Y}`: the names right after `{` or `,` at the first level.
GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] if "\"" not in line else line
                     for line in text.splitlines()
                     if not line.lstrip().startswith("//"))


def edges(mods):
    graph = {m: set() for m in mods}
    for mod in mods:
        for path in files_of(mod):
            with open(path, encoding="utf-8") as f:
                text = strip_comments(f.read())
            found = set(PATH.findall(text))
            for group in GROUP.findall(text):
                depth = 0
                token = ""
                for ch in group + ",":
                    if ch == "{":
                        depth += 1
                    elif ch == "}":
                        depth -= 1
                    elif ch == "," and depth == 0:
                        head = token.strip().split("::", 1)[0].strip()
                        if head:
                            found.add(head)
                        token = ""
                        continue
                    if depth == 0 or ch not in "{}":
                        token += ch if depth == 0 else ""
            for target in found:
                if target in mods and target != mod:
                    graph[mod].add(target)
    return graph


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    graph = edges(top_modules())
    if "--dot" in sys.argv:
        print("digraph modules {")
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print(f"  {a} -> {b};")
        print("}")
    bad = False
    for comp in cycles(graph):
        inner = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        print(f"module-graph: a circle between {', '.join(comp)}: {'; '.join(inner)}",
              file=sys.stderr)
        bad = True
    for a, b in FORBIDDEN:
        if b in graph.get(a, ()):
            print(f"module-graph: `{a}` must not import `{b}`", file=sys.stderr)
            bad = True
    if not bad:
        print(f"module-graph: {len(graph)} top-level modules, no circle", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
