"""docs/design.md's map ("Where each rule lives") names what exists.

The map is how a reader checks that every rule lives once (issue 22); a
function renamed or removed without the map following would send that
reader to nothing. Each name it quotes in backticks is looked up in the
tracked sources: files by path, C names in csrc and the bindings, Node
names in node/, Python names in python/.
"""

from __future__ import annotations

import re
import subprocess

from conftest import ROOT

SOURCE_EXTS = (".c", ".h", ".cc", ".py", ".pyi", ".js", ".mjs", ".ts")


def _map_rows() -> list[str]:
    lines = (ROOT / "docs" / "design.md").read_text().splitlines()
    start = lines.index("## Where each rule lives")
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("| ") and not line.startswith("| Rule "):
            rows.append(line)
    return rows


def _sources() -> dict[str, str]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return {n: (ROOT / n).read_text(errors="replace") for n in names if n.endswith(SOURCE_EXTS)}


def _quoted_names(row: str) -> set[str]:
    """The identifiers and file names a row quotes (`name`, `name()`, `a.b` parts)."""
    out = set()
    for quoted in re.findall(r"`([^`]+)`", row):
        # File names may hold a hyphen (node/demo-server.js); identifiers do not.
        for token in re.findall(r"[A-Za-z_][A-Za-z0-9_./]*(?:-[A-Za-z0-9_./]+)*\.(?:c|h|cc|py|pyi|js|ts)\b|[A-Za-z_][A-Za-z0-9_./]*", quoted):
            out.add(token.rstrip("./"))
    return out


def test_every_name_in_the_map_exists() -> None:
    rows = _map_rows()
    assert len(rows) > 40, "the map's table was not found"
    sources = _sources()
    paths = set(sources) | {p.rsplit("/", 1)[-1] for p in sources}
    by_tree = {tree: "\n".join(t for p, t in sources.items() if p.startswith(tree))
               for tree in ("csrc/", "python/", "node/")}
    everywhere = "\n".join(by_tree.values())
    missing = []
    for row in rows:
        for name in _quoted_names(row):
            if name.endswith(SOURCE_EXTS) and "/" in name or re.fullmatch(r"\w+\.(?:c|h|cc|py|pyi|js|ts)", name):
                found = name in paths or any(p.endswith("/" + name) for p in sources)
            elif re.fullmatch(r"(?:mcpp|MCPP)_\w+", name):  # `mcpp_cli_*` quotes a prefix
                found = re.search(rf"\b{name}\w" if name.endswith("_") else rf"\b{name}\b", everywhere) is not None
            elif re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)+", name):  # camelCase: Node's
                found = re.search(rf"\b{name}\b", by_tree["node/"]) is not None
            elif re.fullmatch(r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+", name):  # snake_case: Python's or C's
                found = re.search(rf"\b{name}\b", everywhere) is not None
            else:
                continue  # prose, a value, a host's own name (http.client, asyncio.wait_for)
            if not found:
                missing.append(name)
    assert sorted(set(missing)) == [], sorted(set(missing))


def test_every_module_attribute_in_the_map_exists() -> None:
    """`_rpc.outcome`, `_native.HttpSession`, `binding.httpUrl`:
    the attribute is in that Python module, or in the bindings' sources."""
    sources = _sources()
    modules = {p.rsplit("/", 1)[-1][:-3]: t for p, t in sources.items()
               if p.startswith("python/mcpping/") and p.endswith(".py")}
    bindings = "\n".join(t for p, t in sources.items()
                         if p.startswith(("node/", "python/mcpping/")) and p.endswith((".c", ".cc", ".pyi")))
    missing, checked = [], 0
    for row in _map_rows():
        for quoted in re.findall(r"`([^`]+)`", row):
            for module, attr in re.findall(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b", quoted):
                if attr in ("py", "pyi", "c", "h", "cc", "js", "ts", "json", "md"):
                    continue  # a file name
                if module in ("_native", "binding"):
                    text = bindings
                elif module in modules:
                    text = modules[module]
                else:
                    continue
                checked += 1
                if not re.search(rf"\b{attr}\b", text):
                    missing.append(f"{module}.{attr}")
    assert checked > 20
    assert missing == [], missing
