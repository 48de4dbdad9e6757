#!/usr/bin/env python3
"""Module cycles in the shipped code of each crate: `scripts/module-cycles.py [ROOT]`.

A module is a source file. Module A depends on module B when A's code names a path into B
(`use crate::b::…`, `super::b::…`, `crate::b::f(…)` inline) — a `mod b;` declaration is not a
dependency, a `pub use b::X` re-export is. A path is resolved to the deepest module file it
reaches, so naming an item of a parent (`super::Seen` in `pipeline/limit.rs`, `crate::Error` of
the crate root) is a dependency on the parent. Unit-test modules (`#[cfg(test)] mod tests { … }`,
`tests.rs`) are left out. Prints each cycle (a strongly connected component of more than one
module) and a total; exits 1 when there is one.

Why a script and not `cargo modules dependencies --acyclic`: that tool builds rust-analyzer
(tens of minutes on two cores); a `use` graph is what it reports anyway.
"""

import pathlib
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(src: pathlib.Path, f: pathlib.Path) -> tuple:
    rel = f.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts and parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def strip_tests(text: str) -> str:
    m = re.search(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+" + IDENT + r"\s*\{", text)
    return text[: m.start()] if m else text


def strip_comments(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def expand_use(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", tree)
    i = tree.find("{")
    if i < 0:
        return [re.sub(r"\bas\w+$", "", tree)]
    prefix, inner = tree[:i], tree[i + 1 : tree.rindex("}")]
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    items.append(cur)
    out = []
    for it in items:
        if it:
            out += [prefix + x for x in expand_use(it)]
    return out


def paths_in(text: str, children: set) -> list:
    uses = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        uses += [re.sub(r"::self$", "", u) for u in expand_use(m.group(1))]
    # A name a `use` brings in (its last segment), or a child module, may start a path.
    alias = {u.split("::")[-1]: u for u in uses}
    alias.update({c: "self::" + c for c in children})
    body = re.sub(r"\buse\s+[^;]+;", "", text)
    paths = list(uses)
    for m in re.finditer(r"(?<![:\w])(" + IDENT + r")((?:::" + IDENT + r")+)", body):
        head, rest = m.group(1), m.group(2)
        if head in ("crate", "super", "self"):
            paths.append(head + rest)
        elif head in alias:
            paths.append(alias[head] + rest)
    return paths


def resolve(path: str, here: tuple, modules: set, local: set):
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] in ("super", "self"):
        base = list(here)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    elif segs[0] in local:
        # `use child::X` in a module file: a path relative to this module.
        base = list(here)
    else:
        return None  # another crate
    target = tuple(base)
    for s in segs:
        if target + (s,) in modules:
            target = target + (s,)
        else:
            break
    return target


def graph_of(src: pathlib.Path) -> dict:
    files = [f for f in src.rglob("*.rs") if f.name != "tests.rs" and "bin" not in f.parts]
    modules = {module_of(src, f): f for f in files}
    edges = {m: set() for m in modules}
    for m, f in modules.items():
        text = strip_tests(strip_comments(f.read_text()))
        children = {c[-1] for c in modules if len(c) == len(m) + 1 and c[: len(m)] == m}
        for p in paths_in(text, children):
            t = resolve(p, m, set(modules), children)
            if t is not None and t != m:
                edges[m].add(t)
    return edges


def cycles(edges: dict) -> list:
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    total = 0
    for src in sorted(root.glob("crates/*/src")):
        found = cycles(graph_of(src))
        name = src.parent.name
        for comp in found:
            shown = ", ".join("::".join(m) or "(root)" for m in comp)
            print(f"{name}: cycle of {len(comp)} modules: {shown}")
        total += len(found)
    print(f"module cycles: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
