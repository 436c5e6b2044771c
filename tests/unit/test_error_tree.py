"""The tree drawn in grattage/errors.py is the tree of classes, and the status and exit code it
gives each branch are those of the HTTP and CLI tables."""

from __future__ import annotations

import re

import grattage.errors
from grattage.entrypoints.cli import exit_code_for
from grattage.entrypoints.http.errors import status_for
from grattage.errors import GrattageError

LINE = re.compile(r"^(?P<indent>[│├└─ ]*)(?P<name>[A-Z]\w+)(?P<rest>.*)$")
CODES = re.compile(r"\((?P<status>\d{3}) / (?P<exit>\d)\)\s*$")


def drawing() -> list[tuple[int, str, str]]:
    doc = grattage.errors.__doc__ or ""
    start = doc.index("    GrattageError")
    rows = []
    for line in doc[start:].splitlines():
        found = LINE.match(line.strip("\n")[4:])
        if found:
            rows.append((len(found["indent"]) // 4, found["name"], found["rest"]))
    return rows


def drawn_parents() -> dict[str, str]:
    parents: dict[str, str] = {}
    path: list[str] = []
    for depth, name, _ in drawing():
        del path[depth:]
        if path:
            parents[name] = path[-1]
        path.append(name)
    return parents


def class_parents() -> dict[str, str]:
    parents: dict[str, str] = {}
    pending: list[type[GrattageError]] = [GrattageError]
    while pending:
        parent = pending.pop()
        for child in parent.__subclasses__():
            if child.__module__ == "grattage.errors":
                parents[child.__name__] = parent.__name__
                pending.append(child)
    return parents


def test_the_drawn_tree_is_the_tree_of_classes() -> None:
    assert drawn_parents() == class_parents()


def test_the_drawn_status_and_exit_code_of_each_branch_are_those_of_the_tables() -> None:
    drawn = {name: CODES.search(rest) for _, name, rest in drawing()}
    branches = {name: found for name, found in drawn.items() if found}
    assert len(branches) == 9
    for name, found in branches.items():
        error = getattr(grattage.errors, name)("message")
        assert (status_for(error), exit_code_for(error)) == (
            int(found["status"]),
            int(found["exit"]),
        ), name


def test_the_docstring_names_modules_that_exist() -> None:
    import importlib

    modules = re.findall(r"`(grattage(?:\.\w+)+)`", grattage.errors.__doc__ or "")
    assert len(modules) >= 3
    for module in modules:
        importlib.import_module(module)
