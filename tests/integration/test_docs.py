"""OpenAPI at /docs, from a packaged Swagger UI, and docs/api.md + docs/back-office.md kept true
to it: every route and every field of every answer is documented, and nothing else is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from support import World

DOCS = Path(__file__).resolve().parents[2] / "docs"
ANSWER_DOCS = ("api.md", "back-office.md")
ROUTES_HEADER = ("route", "status", "answer")
FIELDS_HEADER = ("field", "type", "meaning")
NO_JSON = "—"
"""The answer column of a route whose answer is no JSON (204, a picture, CSV)."""


def test_the_docs_page_loads_swagger_ui_from_the_app_itself(
    client: TestClient, world: World
) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "/docs/assets/swagger-ui-bundle.js" in page.text
    assert "https://" not in page.text and "http://" not in page.text
    assert "'self'" in page.headers["content-security-policy"]
    assert "https:" not in page.headers["content-security-policy"]
    script = client.get("/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert len(script.content) > 100_000
    assert client.get("/openapi.json").json()["paths"]


# --- reading the docs: Markdown tables, one per route list and one per answer schema -------


def _cells(line: str) -> tuple[str, ...]:
    inner = line.strip()[1:-1]
    return tuple(cell.strip() for cell in re.split(r"(?<!\\)\|", inner))


def tables(text: str) -> list[tuple[str | None, tuple[str, ...], list[tuple[str, ...]]]]:
    """Every table of a Markdown text: (the heading above it, its header, its rows)."""
    found: list[tuple[str | None, tuple[str, ...], list[tuple[str, ...]]]] = []
    heading = None
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and index + 1 < len(lines) and set(lines[index + 1]) <= set("|-: "):
            header = _cells(line)
            rows = []
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                rows.append(_cells(lines[index]))
                index += 1
            found.append((heading, header, rows))
            continue
        index += 1
    return found


def _code(cell: str) -> str:
    """A cell's text without its code marks (`` `A` or `B` `` is ``A or B``)."""
    return cell.replace("\\|", "|").replace("`", "").strip()


def documented_routes(text: str) -> dict[tuple[str, str], tuple[str, str]]:
    """``(METHOD, path) → (status, answer)`` from the tables headed route | status | answer."""
    routes = {}
    for _heading, header, rows in tables(text):
        if header == ROUTES_HEADER:
            for route, status, answer in rows:
                method, path = _code(route).split(" ", 1)
                routes[(method, path)] = (status, _code(answer))
    return routes


def documented_fields(text: str) -> dict[str, dict[str, str]]:
    """``schema name → {field: type}`` from each table headed field | type | meaning under a
    heading that names the schema (`` ### `TicketView` ``); a heading that names a second one
    (`` ### `BlockDetail`: a `BlockSummary` and `` ) adds that one's fields first."""
    schemas: dict[str, dict[str, str]] = {}
    bases: dict[str, str] = {}
    for heading, header, rows in tables(text):
        if header == FIELDS_HEADER:
            names = re.findall(r"`(\w+)`", heading or "")
            assert names, f"a field table under no `Schema` heading: {heading!r}"
            assert names[0] not in schemas, f"{names[0]} is documented twice"
            schemas[names[0]] = {_code(field): kind.replace("\\|", "|") for field, kind, _ in rows}
            if len(names) > 1:
                bases[names[0]] = names[1]
    for name, base in bases.items():
        assert base in schemas, f"{name} extends {base}, which has no table"
        schemas[name] = {**schemas[base], **schemas[name]}
    return schemas


# --- reading the OpenAPI document -----------------------------------------------------------


def type_of(schema: dict[str, Any]) -> str:
    """A property's type as the docs write it: `Name`, array of …, … or null, date-time."""
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[1]}`"
    if "anyOf" in schema:
        return " or ".join(type_of(choice) for choice in schema["anyOf"])
    if "enum" in schema:
        return " or ".join(f'"{value}"' for value in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {type_of(schema.get('items', {}))}"
    if kind == "string" and "format" in schema:
        return str(schema["format"])
    return str(kind)


def answered_routes(openapi: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """``(METHOD, path) → (statuses, answer)``: its success statuses ("200, 201") and the
    name of the JSON schema it answers (``—``: no JSON)."""
    routes = {}
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            statuses = sorted(code for code in operation["responses"] if code.startswith("2"))
            content = operation["responses"][statuses[0]].get("content", {})
            schema = content.get("application/json", {}).get("schema", {})
            choices = [choice["$ref"] for choice in schema.get("anyOf", []) if "$ref" in choice]
            if "$ref" in schema:
                choices = [schema["$ref"]]
            answer = " or ".join(ref.rsplit("/", 1)[1] for ref in choices) or NO_JSON
            routes[(method.upper(), path)] = (", ".join(statuses), answer)
    return routes


def answer_schemas(openapi: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Every schema an answer can contain (errors too), followed through its references."""
    schemas = openapi["components"]["schemas"]
    pending = [
        ref
        for operations in openapi["paths"].values()
        for operation in operations.values()
        for response in operation["responses"].values()
        for ref in re.findall(r"#/components/schemas/(\w+)", str(response.get("content", {})))
    ]
    seen: dict[str, dict[str, str]] = {}
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        properties = schemas[name].get("properties", {})
        seen[name] = {field: type_of(schema) for field, schema in properties.items()}
        pending.extend(re.findall(r"#/components/schemas/(\w+)", str(properties)))
    return seen


def _docs() -> str:
    return "\n".join((DOCS / name).read_text("utf-8") for name in ANSWER_DOCS)


@pytest.fixture
def openapi(client: TestClient) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/openapi.json").json()
    return document


def check_routes(documented: dict[Any, Any], served: dict[Any, Any]) -> list[str]:
    problems = [f"{m} {p} is served but not documented" for m, p in served.keys() - documented]
    problems += [f"{m} {p} is documented but not served" for m, p in documented.keys() - served]
    for route in documented.keys() & served.keys():
        if documented[route] != served[route]:
            problems.append(
                f"{' '.join(route)}: docs say {documented[route]}, served {served[route]}"
            )
    return problems


def check_fields(
    documented: dict[str, dict[str, str]], served: dict[str, dict[str, str]]
) -> list[str]:
    problems = [f"schema {name} is not documented" for name in served.keys() - documented]
    problems += [
        f"docs describe {name}, which no answer has" for name in documented.keys() - served
    ]
    for name in documented.keys() & served.keys():
        mine, theirs = documented[name], served[name]
        problems += [f"{name}.{field} is not documented" for field in theirs.keys() - mine]
        problems += [
            f"docs name {name}.{field}, which does not exist" for field in mine.keys() - theirs
        ]
        problems += [
            f"{name}.{field} is {theirs[field]}, docs say {mine[field]}"
            for field in mine.keys() & theirs.keys()
            if mine[field] != theirs[field]
        ]
    return problems


def test_every_route_is_documented_with_its_status_and_answer(openapi: dict[str, Any]) -> None:
    assert check_routes(documented_routes(_docs()), answered_routes(openapi)) == []


def test_every_field_of_every_answer_is_documented_and_the_docs_name_no_other(
    openapi: dict[str, Any],
) -> None:
    assert check_fields(documented_fields(_docs()), answer_schemas(openapi)) == []


def test_the_docs_check_catches_an_undocumented_field_and_a_documented_one_that_does_not_exist(
    openapi: dict[str, Any],
) -> None:
    served = answer_schemas(openapi)
    documented = documented_fields(_docs())
    added = {**served, "TicketView": {**served["TicketView"], "lucky": "integer"}}
    assert check_fields(documented, added) == ["TicketView.lucky is not documented"]
    invented = {**documented, "Health": {**documented["Health"], "uptime": "integer"}}
    assert check_fields(invented, served) == ["docs name Health.uptime, which does not exist"]


def test_every_route_answers_a_declared_schema_not_a_bare_object(openapi: dict[str, Any]) -> None:
    for (method, path), (statuses, answer) in answered_routes(openapi).items():
        if answer == NO_JSON:
            first = statuses.split(", ")[0]
            content = openapi["paths"][path][method.lower()]["responses"][first].get("content")
            assert first == "204" or set(content) - {"application/json"}, (method, path)
