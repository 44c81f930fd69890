"""The lab's layers (memlab/floors.py): every import points down or stays
on its floor without a cycle, and no import hides inside a function."""
import ast
from pathlib import Path

from memlab.floors import FLOORS, floor_of

LAB = Path(__file__).resolve().parents[1] / "memlab"


def modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(LAB.glob("*.py"))
            if p.stem != "__init__"}


def imported(tree: ast.Module, top_level_only: bool = False) -> set[str]:
    """The lab's modules @tree imports (`from . import a`, `from .a import x`)."""
    nodes = tree.body if top_level_only else ast.walk(tree)
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memlab"):
            found |= {node.module.split(".")[1]} if "." in node.module else \
                {a.name for a in node.names}
    return found


def test_every_module_has_one_floor():
    placed = [m for mods in FLOORS.values() for m in mods]
    assert len(placed) == len(set(placed)), "a module on two floors"
    assert sorted(placed) == sorted(modules()), "modules without a floor, or floors without a module"


def test_every_import_points_down_or_stays_on_its_floor():
    upward = [f"{name} ({floor_of(name)}) imports {dep} ({floor_of(dep)})"
              for name, tree in modules().items() for dep in imported(tree)
              if floor_of(dep) > floor_of(name)]
    assert upward == []


def test_no_import_of_the_lab_hides_in_a_function():
    hidden = {name: sorted(imported(tree) - imported(tree, top_level_only=True))
              for name, tree in modules().items()}
    assert {n: deps for n, deps in hidden.items() if deps} == {}


def test_no_floor_has_a_cycle():
    graph = {name: imported(tree) for name, tree in modules().items()}
    state: dict[str, int] = {}      # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = 1
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                return path + [node, dep]
            if dep not in state and (cycle := visit(dep, path + [node])):
                return cycle
        state[node] = 2
        return []
    cycles = [c for name in graph if name not in state and (c := visit(name, []))]
    assert cycles == []


def test_an_upward_import_is_found(tmp_path):
    # The check itself: a ground module that imports the command line.
    tree = ast.parse("from . import cli\nfrom .tables import Table\n")
    assert imported(tree) == {"cli", "tables"}
    assert floor_of("cli") > floor_of("paths")
    hidden = ast.parse("def f():\n    from . import documents\n")
    assert imported(hidden) - imported(hidden, top_level_only=True) == {"documents"}
