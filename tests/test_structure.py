"""The package's import structure (runner/README.md): layers import only downwards, no two modules
import each other, directly or round a longer cycle, no module imports a command module (the
command group names them and imports one when it runs), and none imports another's private name."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.structure import functions, imports, modules

#: layers, lowest first; a module belongs to the layer of the longest prefix of its name listed here
#: ("cardarena." is every module not listed elsewhere), and may import only its own layer and those below
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("package root and its error tree", ("cardarena", "cardarena.errors")),
    ("wire protocol and SDK framing", ("cardarena.protocol",)),
    ("configuration values every layer passes down", ("cardarena.config",)),
    ("rules", ("cardarena.cards", "cardarena.games")),
    ("ratings", ("cardarena.ratings",)),
    ("search SDK", ("cardarena.search",)),
    ("referee", ("cardarena.referee", "cardarena.cores", "cardarena.manifest", "cardarena.samples",
                 "cardarena.notation", "cardarena.moved", "cardarena.record")),
    ("tournament planning", ("cardarena.tournament.planning",)),
    ("tournament execution", ("cardarena.tournament.execution",)),
    ("tournament storage", ("cardarena.tournament.store",)),
    ("run service", ("cardarena.tournament", "cardarena.tournament.service")),
    ("reports", ("cardarena.fault_report", "cardarena.report", "cardarena.html")),
    ("checks", ("cardarena.checking", "cardarena.strength")),
    # the league server is an interface beside the command line: it shares the commands' sandbox
    # preflight (console); only its click adapter (server.commands) is a command module
    ("commands and the league server", ("cardarena.", "cardarena.tournament.commands", "cardarena.html.report",
                                        "cardarena.server")),
]


def layer_of(module: str) -> int:
    matches = [(len(prefix), index) for index, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix if prefix.endswith(".") else prefix + ".")]
    assert matches, f"{module} is in no layer"
    return max(matches)[1]


def test_the_layers_place_modules_as_the_readme_says():
    assert LAYERS[layer_of("cardarena.games.casino")][0] == "rules"
    assert LAYERS[layer_of("cardarena.tournament.store")][0] == "tournament storage"
    assert LAYERS[layer_of("cardarena.tournament.execution.dask_executor")][0] == "tournament execution"
    assert LAYERS[layer_of("cardarena.tournament.commands")][0] == "commands and the league server"
    assert LAYERS[layer_of("cardarena.cli")][0] == "commands and the league server"
    assert LAYERS[layer_of("cardarena.server.league_play")][0] == "commands and the league server"
    assert layer_of("cardarena.checking") < layer_of("cardarena.check")
    assert LAYERS[layer_of("cardarena")][0] == "package root and its error tree"
    assert LAYERS[layer_of("cardarena.record")][0] == "referee"
    assert LAYERS[layer_of("cardarena.html.replay")][0] == "reports"
    assert LAYERS[layer_of("cardarena.html.report")][0] == "commands and the league server"
    assert layer_of("cardarena.config") < layer_of("cardarena.games.casino")


def test_every_import_goes_to_the_same_layer_or_below():
    upward = [f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
              for module, targets in imports().items() for target in sorted(targets)
              if layer_of(target) > layer_of(module)]
    assert upward == []


def test_the_protocol_package_imports_nothing_else_of_cardarena():
    """A bot needs only cardarena.protocol (and its package root) to speak the protocol."""
    outside = {(module, target) for module, targets in imports().items() if module.startswith("cardarena.protocol")
               for target in targets if not target.startswith("cardarena.protocol") and target != "cardarena"}
    assert outside == set()


def test_no_import_cycles():
    graph = imports()
    cycles = []
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                cycles.append(" -> ".join(path[path.index(target):] + [module, target]) if target in path
                              else f"{module} -> {target}")
            elif target not in state:
                visit(target, path + [module])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert cycles == []


def test_what_a_bot_sees_of_cardarena_imports_nothing_it_cannot_see():
    """A sandboxed bot sees only views.SDK_ENTRIES of the package and the SDK (protocol/SEARCH.md):
    every module there must import only modules there, or a bot's import would fail in the sandbox."""
    from cardarena.referee.views import SDK_ENTRIES

    visible = {"cardarena", "cardarena.protocol"} | {
        "cardarena." + entry.removesuffix(".py") for entry in SDK_ENTRIES if not entry.startswith("__")}

    def seen(module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in visible if name != "cardarena") \
            or module == "cardarena"

    missing = {(module, target) for module, targets in imports().items() if seen(module)
               for target in targets if not seen(target)}
    assert missing == set()


def command_modules() -> set[str]:
    """The command modules: those that define a click command (the command line's adapters)."""
    return {function.module for function in functions() if function.is_click_command}


def test_the_command_modules_are_the_click_adapters():
    assert command_modules() == {"cardarena.cli", "cardarena.play", "cardarena.check", "cardarena.fault_list",
                                 "cardarena.html.report", "cardarena.tournament.commands", "cardarena.server.commands"}


def test_no_module_imports_a_command_module():
    """A command module is an adapter from the command line to the library: what another module
    needs of it belongs in a library module (a league server, say, imports no click command)."""
    commands = command_modules()
    importing = {(module, target) for module, targets in imports().items() for target in targets & commands}
    assert importing == set()


def test_the_command_line_names_every_command_and_imports_none_before_it_runs():
    """cli.COMMANDS names every click command of the other command modules, and `import cardarena.cli`
    imports none of those modules: a command's start pays for its own imports only."""
    from cardarena.cli import COMMANDS

    defined = {f"{function.module}:{function.name}" for function in functions()
               if function.is_click_command and function.module != "cardarena.cli"}
    assert set(COMMANDS.values()) == defined
    probe = ("import sys, cardarena.cli; "
             f"print(sorted(set(sys.modules) & set({sorted(command_modules() - {'cardarena.cli'})!r})))")
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]"


def test_no_module_imports_a_private_name_of_another():
    """A name with a leading underscore is its module's own: another module that needs it needs a public one."""
    private = []
    for module, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cardarena":
                private += [f"{module}: from {node.module} import {alias.name}" for alias in node.names
                            if alias.name.startswith("_") and not alias.name.startswith("__") and node.module != module]
    assert private == []


#: the top floor's size limits (issue 26): a function longer than this, or with more parameters
#: (a click command's are the command line's, so they do not count), is doing several things
MOST_LINES, MOST_PARAMETERS = 60, 8


def test_no_function_is_longer_than_sixty_lines_or_takes_more_than_eight_parameters():
    too_big = [f"{function.module}.{function.name}: {function.lines} lines, {function.parameters} parameters"
               for function in functions()
               if function.lines > MOST_LINES or (function.parameters > MOST_PARAMETERS
                                                  and not function.is_click_command)]
    assert too_big == []
