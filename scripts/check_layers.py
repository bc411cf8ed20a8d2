#!/usr/bin/env python3
"""Checks the C tree's layers and finds include circles (issue 22 item 5).

The rules (csrc/src/README.md says why):
  1. layers: a file of csrc/src/<layer>/ includes only its own layer, the
     layers below it and the public headers (csrc/include):
       engine  <- driver <- runtime <- app
     the engine (sans-I/O) never includes <uv.h>, and the public headers
     include only public headers (they are installed);
  2. no #include cycle among csrc, python/mcpping and node files;
  3. no header circle: a private header H must not declare a function
     whose source includes another header that includes H back (H would sit
     both below and above that source: main's internal.h declared
     keepalive.c's mcpp__engine_next_expiry while engine.h, which
     keepalive.c includes, included internal.h);
  4. no call circle between the bindings' glue files (python/mcpping/*.c,
     node/*.cc): they share one header, so rules 2 and 3 cannot see who
     calls whom; a file calls only files below it (main's _module.c called
     _engine.c and _wrap.c to register them, and they called back into it
     for mcpping_raise and mcpping_to_argv);
  5. every public sub-header (csrc/include/mcpping/*.h) and mcpping.h
     compiles alone (`$CC -fsyntax-only`, as C11 and as C++), so the order
     of mcpping.h's includes is never what makes one of them compile.

Exits 1 listing every violation, 0 with a one-line summary. `--no-compile`
skips rule 5 (no compiler needed).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["engine", "driver", "runtime", "app"]
# Which layers each layer may include (besides the public headers).
ALLOWED = {layer: set(LAYERS[: i + 1]) for i, layer in enumerate(LAYERS)}
INCLUDE_DIRS = ["csrc/include", "csrc/src"]


def rel(path):
    return os.path.relpath(path, ROOT)


def files():
    out = []
    for base, exts in [("csrc/include", (".h",)), ("csrc/src", (".c", ".h")),
                       ("python/mcpping", (".c", ".h")), ("node", (".cc", ".h"))]:
        for d, _, names in os.walk(os.path.join(ROOT, base)):
            for n in sorted(names):
                if n.endswith(exts):
                    out.append(rel(os.path.join(d, n)))
    return sorted(out)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def includes(path, text):
    """The (quoted, resolved-or-None, line) includes and the <system> ones."""
    quoted, system = [], []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
        if not m:
            continue
        name = m.group(2)
        if m.group(1) == "<":
            system.append((name, i))
            continue
        found = None
        for d in [os.path.dirname(path)] + INCLUDE_DIRS:
            cand = os.path.normpath(os.path.join(d, name))
            if os.path.exists(os.path.join(ROOT, cand)):
                found = cand
                break
        quoted.append((name, found, i))
    return quoted, system


def layer_of(path):
    parts = path.split("/")
    if parts[:2] == ["csrc", "src"] and len(parts) > 3 and parts[2] in LAYERS:
        return parts[2]
    return None


DECL = re.compile(r"^(?!typedef\b|return\b|static\b|extern\s+\"C\")[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{}]*\)\s*;", re.M)
DEFN = re.compile(r"^(?!static\b|typedef\b)[A-Za-z_][\w \t\*:<>,]*?(?<![:\w])(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{", re.M)


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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


def main(argv):
    problems = []
    texts = {f: open(os.path.join(ROOT, f), encoding="utf-8").read() for f in files()}
    inc = {}
    for f, text in texts.items():
        quoted, system = includes(f, text)
        inc[f] = {found for _, found, _ in quoted if found in texts}
        layer = layer_of(f)
        for name, found, line in quoted:
            if found is None or found not in texts:
                continue
            if f.startswith("csrc/include/") and not found.startswith("csrc/include/"):
                problems.append(f"{f}:{line}: a public header includes the private {found}")
            target = layer_of(found)
            if layer and target and target not in ALLOWED[layer]:
                problems.append(f"{f}:{line}: the {layer} layer includes {found} of the {target} layer")
            if found.startswith("csrc/src/") and not target:
                problems.append(f"{f}:{line}: {found} is in no layer (csrc/src/<layer>/)")
        if layer == "engine":
            for name, line in system:
                if name == "uv.h" or name.startswith("uv/"):
                    problems.append(f"{f}:{line}: the engine (sans-I/O) includes <{name}>")

    # Rule 2: include cycles.
    for comp in cycles(inc):
        problems.append("include cycle: " + " <-> ".join(comp))

    # Rule 3: header circles.
    reach = {}

    def reaches(start):
        if start not in reach:
            seen, todo = set(), [start]
            while todo:
                for g in inc.get(todo.pop(), ()):
                    if g not in seen:
                        seen.add(g)
                        todo.append(g)
            reach[start] = seen
        return reach[start]

    # An anonymous namespace's functions are file-local, as static ones are.
    code = {f: strip_comments(re.sub(r"\nnamespace \{\n.*?\n\}  // namespace\n", "\n", t, flags=re.S))
            for f, t in texts.items()}
    defined = {}  # function name -> source files defining it
    for f, t in code.items():
        if f.endswith((".c", ".cc")):
            for name in DEFN.findall(t):
                defined.setdefault(name, set()).add(f)
    for h, t in code.items():
        if not h.endswith(".h") or h.startswith("csrc/include/"):
            continue
        for name in sorted(set(DECL.findall(t))):
            for src in sorted(defined.get(name, ())):
                for g in sorted(inc[src]):
                    if g != h and h in reaches(g):
                        problems.append(
                            f"header circle: {h} declares {name}(), defined in {src}, "
                            f"which includes {g}, which includes {h}")

    # Rule 4: call circles between the bindings' glue files.
    for group in ("python/mcpping/", "node/"):
        glue = [f for f in code if f.startswith(group) and f.endswith((".c", ".cc"))]
        defs = {f: set(DEFN.findall(code[f])) for f in glue}
        calls = {}
        for f in glue:
            tokens = set(re.findall(r"\b\w+\b", code[f]))
            calls[f] = {g for g in glue if g != f and tokens & defs[g]}
        for comp in cycles(calls):
            detail = "; ".join(
                f"{a} calls {b} ({', '.join(sorted(set(re.findall(r'[A-Za-z_]+', code[a])) & defs[b]))})"
                for a in comp for b in comp if b in calls[a])
            problems.append("call circle: " + detail)

    # Rule 5: every public header compiles alone.
    compiled = 0
    if "--no-compile" not in argv:
        cc = os.environ.get("CC", "cc")
        cxx = os.environ.get("CXX", "c++")
        headers = ["csrc/include/mcpping.h"] + sorted(
            f for f in texts if f.startswith("csrc/include/mcpping/"))
        with tempfile.TemporaryDirectory() as tmp:
            for h in headers:
                name = h[len("csrc/include/"):]
                for comp, ext, std in [(cc, "c", "-std=c11"), (cxx, "cc", "-std=c++17")]:
                    src = os.path.join(tmp, "alone." + ext)
                    with open(src, "w") as fh:
                        fh.write(f'#include "{name}"\n')
                    r = subprocess.run([comp, std, "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                                        "-I" + os.path.join(ROOT, "csrc/include"), src],
                                       capture_output=True, text=True)
                    compiled += 1
                    if r.returncode != 0:
                        errors = [l for l in r.stderr.splitlines() if "error" in l]
                        first = (errors or r.stderr.strip().splitlines() or ["?"])[0]
                        problems.append(f"{h} does not compile alone as {ext}: {first}")

    if problems:
        for p in problems:
            print(p)
        print(f"check_layers: {len(problems)} problem(s)")
        return 1
    print(f"check_layers: {len(texts)} files, layers {' <- '.join(LAYERS)}, "
          f"no include, header or call circle, {compiled} header builds alone")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
