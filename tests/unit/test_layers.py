"""The layers' direction: providers (the external services' clients and simulators) may import core, never the
reverse, so core stays usable without them (issue 32)."""
import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and not node.level}


def test_core_never_imports_providers():
    modules = sorted(CORE.rglob("*.py"))
    assert CORE / "settings.py" in modules
    offending = {str(p.relative_to(CORE)): sorted(n for n in _imported(p) if n.split(".")[0] == "providers")
                 for p in modules}
    assert {path: names for path, names in offending.items() if names} == {}


ROOT = CORE.parent


def test_use_cases_reach_the_database_only_through_a_unit_of_work():
    """Transactions are opened by core.uow (which wakes the relay and guards provider calls), never by hand: no
    `engine.begin()`/`engine.connect()` outside core and the services' stores."""
    opened = []
    for path in sorted([*(ROOT / "services").rglob("*.py"), *(ROOT / "gateway").rglob("*.py")]):
        if path.name == "store.py" or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
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

    graph = grimp.build_graph("core", "providers", "services", "gateway")
    assert "services.sdr.store" in graph.modules
    assert _loops(graph) == []
