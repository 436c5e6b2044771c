"""Real served answers — a purchase, the ticket, its proof — validate against the app's own
/openapi.json, for a drawn block (receipt v2, proof with its draw) and an undrawn one
(receipt v1), every object schema closed: a field the schema lacks fails, as does one it
requires that is not sent (the outsider of the drawn sale found v2 answers broke it)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema_rs
import pytest
from fastapi.testclient import TestClient

from integration.test_fairness import CSRF, signed_in
from support import World, drawn_answer


def _closed(schema: Any) -> Any:
    """Every object schema that lists its properties allows no other."""
    if isinstance(schema, dict):
        closed = {key: _closed(value) for key, value in schema.items()}
        if "properties" in closed and "additionalProperties" not in closed:
            closed["additionalProperties"] = False
        return closed
    if isinstance(schema, list):
        return [_closed(value) for value in schema]
    return schema


def _errors(openapi: dict[str, Any], schema: dict[str, Any], answer: Any) -> list[str]:
    rooted = {**schema, "components": copy.deepcopy(openapi["components"])}
    return [
        f"{error.instance_path}: {error.message}"
        for error in jsonschema_rs.Draft202012Validator(_closed(rooted)).iter_errors(answer)
    ]


def _check(openapi: dict[str, Any], method: str, path: str, status: int, answer: Any) -> None:
    declared = openapi["paths"][path][method]["responses"][str(status)]
    schema = declared["content"]["application/json"]["schema"]
    assert _errors(openapi, schema, answer) == [], f"{method.upper()} {path} {status}"
    if isinstance(answer, dict) and "receipt" in answer:
        # A ticket's receipt is an object in TicketView (a service record): it must still be
        # one of the receipts the proof's schema declares.
        receipts = {"anyOf": [{"$ref": f"#/components/schemas/{n}"} for n in RECEIPTS]}
        assert _errors(openapi, receipts, answer["receipt"]) == [], f"{path}: its receipt"


RECEIPTS = ("Receipt", "DrawnReceipt")


@pytest.mark.parametrize(
    "world_settings", [{"drawn": True}, {"drawn": False}], ids=["drawn", "undrawn"]
)
def test_a_purchase_its_ticket_and_its_proof_validate_against_the_served_schema(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    signed_in(client, world)
    openapi = client.get("/openapi.json").json()
    bought = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert bought.status_code == 201
    answer = bought.json()
    expected = "grattage-receipt/2" if world.witness is not None else "grattage-receipt/1"
    assert answer["receipt"]["format"] == expected
    _check(openapi, "post", "/api/games/{game}/tickets", 201, answer)
    ticket = drawn_answer(client, answer)
    _check(openapi, "get", "/api/tickets/{ticket_id}", 200, ticket)
    proof = client.get(f"/api/tickets/{answer['id']}/proof")
    assert proof.status_code == 200
    assert ("draw" in proof.json()) == (world.witness is not None)
    _check(openapi, "get", "/api/tickets/{ticket_id}/proof", 200, proof.json())
    commitment = client.get("/api/blocks/1/commitment")
    _check(openapi, "get", "/api/blocks/{block_id}/commitment", 200, commitment.json())
