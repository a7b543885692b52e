#!/usr/bin/env python3
"""Fails where the Rust files of a crate import each other in a circle.

Each crate root (src/lib.rs, kernels/src/lib.rs, cli/src/main.rs, viewer/src/lib.rs) and the
files its `mod` lines reach are modules; `use crate::…`, `use super::…`, `use self::…` and paths
such as `crate::a::b` or `super::x` in code are arrows from a file to the file that defines the
module they name. A module's own file (a `mod.rs`, the crate root) declares and re-exports its
children, so arrows into and out of it are left out: what counts is a circle among sibling
files, e.g. a.rs -> b.rs -> a.rs, where the shared piece belongs in a module both import.

Usage: python3 .ci/import-cycles.py [ROOT]   (exit 1 and the circles where there are any)
"""

import re
import sys
from pathlib import Path

USE = re.compile(r"\buse\s+((?:crate|super|self)::[^;]*);", re.S)
PATH = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
# A `mod name;` line with the attributes before it, where a `#[path = "…"]` may name its file.
MOD = re.compile(
    r"^((?:\s*#\[[^\]]*\])*)\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;",
    re.M,
)
PATH_ATTR = re.compile(r'#\[path\s*=\s*"([^"]+)"\]')


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def modules(root_file):
    """{module path tuple: file} for the crate whose root is `root_file`."""
    found = {(): root_file}
    stack = [((), root_file)]
    while stack:
        path, file = stack.pop()
        text = strip_comments(file.read_text())
        if file.name in ("lib.rs", "main.rs", "mod.rs"):
            folder = file.parent
        else:
            folder = file.parent / file.stem
        for attributes, name in MOD.findall(text):
            # A `#[path]` is relative to the folder of the file that holds it.
            candidates = [file.parent / p for p in PATH_ATTR.findall(attributes)]
            candidates += [folder / f"{name}.rs", folder / name / "mod.rs"]
            for child in candidates:
                if child.exists():
                    found[path + (name,)] = child
                    stack.append((path + (name,), child))
                    break
    return found


def expand(use):
    """The paths of one `use` tree: `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e."""
    use = re.sub(r"\s+", "", use)
    if "{" not in use:
        return [use.split(" as ")[0]]
    head, _, rest = use.partition("{")
    body = rest[: rest.rfind("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p for part in parts if part for p in expand(head + part)]


def resolve(module, path, known):
    """The longest known module that `path` (as written in `module`) names."""
    segments = path.split("::")
    if segments[0] == "crate":
        base, segments = (), segments[1:]
    else:
        base = module
        while segments and segments[0] in ("super", "self"):
            if segments.pop(0) == "super":
                base = base[:-1]
    target = base
    for segment in segments:
        if target + (segment,) in known:
            target = target + (segment,)
        else:
            break
    return target


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    roots = [
        root / "src/lib.rs",
        root / "kernels/src/lib.rs",
        root / "cli/src/main.rs",
        root / "viewer/src/lib.rs",
    ]
    found_any = False
    for crate_root in roots:
        if not crate_root.exists():
            continue
        known = modules(crate_root)
        files = {module: file for module, file in known.items()}
        graph = {}
        for module, file in known.items():
            if file.name in ("lib.rs", "main.rs", "mod.rs"):
                continue
            text = strip_comments(file.read_text())
            paths = [p for use in USE.findall(text) for p in expand(use)]
            paths += PATH.findall(USE.sub("", text))
            for path in paths:
                target = resolve(module, path, known)
                target_file = files.get(target)
                if (target_file is None or target_file == file
                        or target_file.name in ("lib.rs", "main.rs", "mod.rs")):
                    continue
                graph.setdefault(file, set()).add(target_file)
        for component in cycles(graph):
            found_any = True
            names = ", ".join(str(f.relative_to(root)) for f in component)
            print(f"import cycle in {crate_root.relative_to(root)}: {names}")
            for f in component:
                for g in sorted(graph.get(f, ())):
                    if g in component:
                        print(f"  {f.relative_to(root)} -> {g.relative_to(root)}")
    if found_any:
        sys.exit(1)
    print("no import cycles among the files of src/, kernels/src/, cli/src/ and viewer/src/")


if __name__ == "__main__":
    main()
