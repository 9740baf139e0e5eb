"""An import-linter contract of our own: no import circles between modules.

import-linter's acyclic_siblings contract treats each package as one unit, so it would
count the evaluations app, whose tables sit below the pipeline and whose lifecycle sits
above it (pyproject.toml, the layers contract), as a circle with the pipeline. What we
hold to is that no module reaches itself through its imports, however indirectly: a
module that does can run half-initialised and cannot be read on its own.
"""

from typing import cast

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


class AcyclicModulesContract(Contract):
    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        # Contract.__init__ replaced the field by the list the configuration gives.
        packages = cast(list[str], self.packages)
        modules = {
            module for package in packages for module in graph.find_descendants(package) | {package}
        }
        imports = {
            module: sorted(graph.find_modules_directly_imported_by(module) & modules)
            for module in modules
        }
        cycles = [sorted(group) for group in _strongly_connected(imports) if len(group) > 1]
        return ContractCheck(kept=not cycles, warnings=None, metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print("These modules import each other, directly or through others:")
            for module in cycle:
                output.print(f"- {module}")
            output.new_line()


def _strongly_connected(imports: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, without recursion (an import chain can be long)."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(imports[root]))]
        index[root] = lowest[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, pending = work[-1]
            for imported in pending:
                if imported not in index:
                    index[imported] = lowest[imported] = len(index)
                    stack.append(imported)
                    on_stack.add(imported)
                    work.append((imported, iter(imports[imported])))
                    break
                if imported in on_stack:
                    lowest[module] = min(lowest[module], index[imported])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    lowest[parent] = min(lowest[parent], lowest[module])
                if lowest[module] == index[module]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == module:
                            break
                    groups.append(group)
    return groups
