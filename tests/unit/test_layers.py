"""The storage walls of the layers (issue 52), read from the source's syntax trees.

import-linter (pyproject's [tool.importlinter], run by `make test`) holds the arrows between packages (core below providers, so core
stays usable without them); these rules are about modules inside a service, which its contracts cannot name:

- a store module (`services.<service>.store`, `*_store`) holds query functions for the service's repositories: only
  repository modules (`repository.py`, `*_repository.py`, `repositories/`) and the service's own migrations import
  it, so a use case reaches storage through its unit of work alone;
- a raw asyncpg pool (`asyncpg.Pool`, `create_pool`, `.acquire(`) is core's (core.db): the application's code goes
  through `core.uow.UnitOfWork`, whose transaction also carries the provider-call guard;
- a transaction is opened by core.uow (which wakes the relay and guards provider calls), never by hand.

The application is services/, gateway/, providers/, contracts/ and deploy/. bench/ is not: its bare servers are the
baselines the stack is measured against, and it times the stores' statements themselves.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPLICATION = ("services", "gateway", "providers", "contracts", "deploy")


@functools.cache
def _sources() -> tuple[tuple[str, Path, ast.Module], ...]:
    """Every module of the application: its dotted name, its path and its syntax tree (parsed once for the tests
    here)."""
    found = []
    for package in APPLICATION:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join(parts), path, ast.parse(path.read_text(), str(path))))
    return tuple(found)


def _imports(module: str, path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Each dotted name an import statement reaches (inside functions too), relative imports resolved.

    `from a.b import c` yields both `a.b` and `a.b.c`: c may be a module or a name in a.b."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _store_module(name: str) -> str | None:
    """The store module a dotted name is or lies in (`services.<service>...store` or `..._store`), if one exists."""
    parts = name.split(".")
    if parts[0] != "services":
        return None
    for end in range(3, len(parts) + 1):
        last = parts[end - 1]
        if last in ("store", "stores") or last.endswith("_store"):
            candidate = ROOT.joinpath(*parts[:end])
            if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
                return ".".join(parts[:end])
    return None


def _may_import_store(path: Path, store: str) -> bool:
    """Repository modules, and the migrations of the store's own service."""
    relative = path.relative_to(ROOT).parts
    if path.name == "repository.py" or path.name.endswith("_repository.py") or "repositories" in relative:
        return True
    service = store.split(".")[1]
    return relative[:3] == ("services", service, "migrations")


def test_only_repositories_import_a_store() -> None:
    offenders = sorted({
        f"{path.relative_to(ROOT)}:{line} imports {store}"
        for module, path, tree in _sources()
        for line, name in _imports(module, path, tree)
        if (store := _store_module(name)) is not None and store != module and not _may_import_store(path, store)
    })
    assert not offenders, "a store module imported outside its repositories (go through the unit of work):\n" + (
        "\n".join(offenders))


def _pool_uses(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "Pool" and isinstance(node.value, ast.Name) and (
                node.value.id == "asyncpg"):
            yield node.lineno, "asyncpg.Pool"
        elif isinstance(node, ast.ImportFrom) and node.module == "asyncpg":
            for alias in node.names:
                if alias.name in ("Pool", "create_pool"):
                    yield node.lineno, f"from asyncpg import {alias.name}"
        elif isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called == "create_pool":
                yield node.lineno, "create_pool(...)"
            elif called == "acquire" and isinstance(node.func, ast.Attribute):
                yield node.lineno, ".acquire(...)"


def test_no_raw_pool_outside_core() -> None:
    offenders = sorted(
        f"{path.relative_to(ROOT)}:{line} {use}"
        for _, path, tree in _sources()
        for line, use in _pool_uses(tree)
    )
    assert not offenders, "a raw asyncpg pool outside core (use core.uow.UnitOfWork):\n" + "\n".join(offenders)


def test_use_cases_reach_the_database_only_through_a_unit_of_work() -> None:
    """No `engine.begin()`/`engine.connect()` outside core and the services' stores."""
    opened = []
    for _, path, tree in _sources():
        relative = path.relative_to(ROOT).parts
        if relative[0] not in ("services", "gateway") or path.name == "store.py" or "migrations" in relative:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("begin", "connect") and \
                    isinstance(node.value, ast.Attribute | ast.Name) and \
                    getattr(node.value, "attr", getattr(node.value, "id", "")) == "engine":
                opened.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert opened == []


def _loops(graph) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return loops


def test_no_import_loops():
    """No module imports, even inside a function, one that imports it back (import-linter's grimp builds the graph
    of every import). `make test`'s lint-imports keeps the layers; this keeps each layer free of loops."""
    import grimp

    graph = grimp.build_graph("core", "providers", "contracts", "services", "gateway")
    assert "services.sdr.store" in graph.modules
    assert _loops(graph) == []
