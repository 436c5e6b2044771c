"""The ten forgeries of issue 14, played by an operator who holds every key, against a real
``grattage serve`` with real sales, and checked by the real ``grattage`` command line.

Each forged proof below is *valid by itself* (the test shows ``verify-ticket`` accepts it
UNPINNED: every signature is the operator's own), so what catches it is the head a player or
a monitor pinned, the public log, or a monitor's memory — never a signature."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from grattage.blocks.sealing import new_block_key
from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.games import load_table
from grattage.games.table import table_from_dict
from grattage.service import transparency
from grattage.service.emissions import list_blocks
from support import PASSWORD, World, make_world

from .forger import Operator, get_all_entries, grattage
from .test_servers import server

TWENTY_EUROS = """
game = "cash"
title = "Cash (forgeries)"
source = "tests"
reconstruction = false
block_size = 40
amounts_cents = [2000, 500]

[[tiers]]
prize_cents = 2000
count = 6

[[tiers]]
prize_cents = 500
count = 4
"""
SOLD = 30


@dataclass
class Shop:
    """A server that sold ``SOLD`` of a 40-unit block's tickets, a head pinned after them and
    a monitor's state from then."""

    world: World
    base: str
    directory: Path
    headers: dict[str, str]
    proofs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def operator(self) -> Operator:
        return Operator(self.world, self.base)

    @property
    def block_row(self) -> int:
        return list_blocks(self.world.platform, "cash")[0].id

    @property
    def pinned(self) -> Path:
        return self.directory / "pinned-sth.json"

    @property
    def state(self) -> Path:
        return self.directory / "monitor-state.json"

    def buy(self, count: int) -> list[dict[str, Any]]:
        bought = []
        for _ in range(count):
            answer = httpx.post(
                f"{self.base}/api/games/cash/tickets", json={"mode": "auto"}, headers=self.headers
            )
            assert answer.status_code == 201, answer.text
            bought.append(answer.json())
        return bought

    def proof(self, ticket_id: int, tree_size: int | None = None) -> dict[str, Any]:
        params = {} if tree_size is None else {"tree_size": tree_size}
        answer = httpx.get(
            f"{self.base}/api/tickets/{ticket_id}/proof", params=params, headers=self.headers
        )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def write(self, name: str, document: object) -> Path:
        path = self.directory / name
        path.write_text(json.dumps(document), "utf-8")
        return path

    def proof_won(self, prize_cents: int) -> dict[str, Any]:
        return next(p for p in self.proofs if p["unit"]["prize_cents"] == prize_cents)

    def pinned_entries(self) -> list[dict[str, Any]]:
        size = json.loads(self.pinned.read_text("utf-8"))["tree_size"]
        return get_all_entries(self.base)[:size]


@contextmanager
def open_shop(world: World, directory: Path) -> Iterator[Shop]:
    world.stock("cash", table=load_table("cash", TWENTY_EUROS, "twenty.toml"))
    email = f"forged-{uuid.uuid4().hex[:8]}@example.org"
    world.player(100_000, email=email)
    with server(world) as base:
        token = httpx.post(
            f"{base}/api/sessions", json={"email": email, "password": PASSWORD}
        ).json()["token"]
        shop = Shop(world, base, directory, {"Authorization": f"Bearer {token}"})
        bought = shop.buy(SOLD)
        shop.proof(bought[-1]["id"])  # merges the log now rather than within the merge delay
        head = httpx.get(f"{base}/api/log/sth").json()
        shop.pinned.write_text(json.dumps(head), "utf-8")
        shop.proofs = [shop.proof(ticket["id"], head["tree_size"]) for ticket in bought]
        watched = grattage("monitor", base, "--state", shop.state)
        assert watched.returncode == 0, watched.stderr
        yield shop


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    """One shop for the forged proofs, which leave its database as it is."""
    directory = tmp_path_factory.mktemp("shop")
    with (
        make_world("sqlite", directory, drawn=False) as world,
        open_shop(world, directory) as opened,
    ):
        yield opened


@pytest.fixture
def own_shop(world: World, tmp_path: Path) -> Iterator[Shop]:
    """A shop of its own, for the forgeries that rewrite the database (SQLite and PostgreSQL)."""
    world.check_books = False  # the operator's forged sales are not in its books
    with open_shop(world, tmp_path) as opened:
        yield opened


def best_unsold(tiers: bytes) -> int:
    """An unsold unit, a winning one if any is left: what a cheat would claim."""
    return max(range(SOLD, len(tiers)), key=lambda position: tiers[position] != 0)


# -- forged proofs: each is valid by itself, refused against a pinned head or the log -------
def table_remapped(shop: Shop) -> dict[str, Any]:
    """(1) A 20 € prize re-mapped to 12 € in the table, rehashed, the tree rebuilt over the new
    prizes, the ticket redesigned, everything re-signed."""
    genuine = shop.proof_won(2000)
    block_id = bytes.fromhex(genuine["commitment"]["block_id"])
    key, tiers = shop.operator.block_secrets(shop.block_row)
    table = copy.deepcopy(genuine["commitment"]["table"])
    for tier in table["tiers"]:
        if tier["prize_cents"] == 2000:
            tier["prize_cents"] = 1200
    table["amounts_cents"] = [1200 if a == 2000 else a for a in table["amounts_cents"]]
    return reissued(shop, genuine, block_id=block_id, key=key, tiers=tiers, table=table)


def size_changed(shop: Shop) -> dict[str, Any]:
    """(2) The block made larger (ten more losing units: worse odds), re-committed."""
    genuine = shop.proofs[0]
    block_id = bytes.fromhex(genuine["commitment"]["block_id"])
    key, tiers = shop.operator.block_secrets(shop.block_row)
    table = copy.deepcopy(genuine["commitment"]["table"])
    table["block_size"] += 10
    return reissued(shop, genuine, block_id=block_id, key=key, tiers=tiers + bytes(10), table=table)


def created_at_backdated(shop: Shop) -> dict[str, Any]:
    """(3) The commitment's created_at moved a year back, re-signed."""
    genuine = shop.proofs[0]
    block_id = bytes.fromhex(genuine["commitment"]["block_id"])
    key, tiers = shop.operator.block_secrets(shop.block_row)
    created = genuine["commitment"]["created_at"]
    backdated = f"{int(created[:4]) - 1}{created[4:]}"
    return reissued(
        shop,
        genuine,
        block_id=block_id,
        key=key,
        tiers=tiers,
        table=genuine["commitment"]["table"],
        created_at=backdated,
    )


def reshuffled(shop: Shop) -> dict[str, Any]:
    """(4) A sold 20 € unit swapped with an unsold losing one, the root recomputed and
    re-signed: the winner's proof now shows a loss."""
    genuine = shop.proof_won(2000)
    block_id = bytes.fromhex(genuine["commitment"]["block_id"])
    key, tiers = shop.operator.block_secrets(shop.block_row)
    swapped = bytearray(tiers)
    position = genuine["unit"]["position"]
    loser = next(p for p in range(SOLD, len(tiers)) if tiers[p] == 0)
    swapped[position], swapped[loser] = swapped[loser], swapped[position]
    forged = reissued(
        shop,
        genuine,
        block_id=block_id,
        key=key,
        tiers=bytes(swapped),
        table=genuine["commitment"]["table"],
    )
    assert forged["unit"]["prize_cents"] == 0
    return forged


def block_fabricated(shop: Shop) -> dict[str, Any]:
    """(5) A whole block that was never emitted, with a 16 000 € unit, its commitment and a
    sale appended to a log the operator re-signs: a 16 000 € proof minted."""
    genuine = shop.proofs[0]
    table = copy.deepcopy(genuine["commitment"]["table"])
    table["tiers"] = [
        {"index": 1, "prize_cents": 1_600_000, "count": 1, "shows": []},
        *({**tier, "index": tier["index"] + 1} for tier in table["tiers"]),
    ]
    table["amounts_cents"] = [1_600_000, *table["amounts_cents"]]
    tiers = bytearray(shuffled_tiers(table_from_dict(table), secure_generator()))
    jackpot = tiers.index(1)
    tiers[0], tiers[jackpot] = tiers[jackpot], tiers[0]
    block_id, key = uuid.uuid4().bytes, new_block_key()
    operator = shop.operator
    commitment, tree, game = operator.commit(
        genuine["commitment"], block_id=block_id, key=key, tiers=bytes(tiers), table=table
    )
    entries = shop.pinned_entries()
    time = entries[-1]["time"]
    index = len(entries)
    receipt = operator.receipt(
        genuine["receipt"],
        ticket_id=genuine["receipt"]["ticket_id"] + 1000,
        block_id=block_id,
        sequence=0,
        position=0,
        commitment_index=index,
    )
    entries += [
        {"v": 1, "kind": "block.commitment", "time": time, "commitment": commitment},
        {
            "v": 1,
            "kind": "block.opened",
            "time": time,
            "block_id": block_id.hex(),
            "commitment_index": index,
        },
        {"v": 1, "kind": "sale.receipt", "time": time, "receipt": receipt},
    ]
    unit, ticket = operator.unit(
        genuine, block_id=block_id, key=key, tiers=bytes(tiers), tree=tree, game=game, position=0
    )
    forged = operator.proof(
        genuine, entries, commitment_index=index, receipt_index=index + 2, unit=unit, ticket=ticket
    )
    assert forged["unit"]["prize_cents"] == 1_600_000
    return forged


def never_sold(shop: Shop) -> dict[str, Any]:
    """(6) A unit nobody bought, with a receipt minted for it (the next sequence number)."""
    genuine = shop.proofs[-1]
    key, tiers = shop.operator.block_secrets(shop.block_row)
    position = best_unsold(tiers)
    operator = shop.operator
    entries = shop.pinned_entries()
    receipt = operator.receipt(
        genuine["receipt"],
        ticket_id=genuine["receipt"]["ticket_id"] + 1000,
        sequence=SOLD,
        position=position,
    )
    entries.append(
        {"v": 1, "kind": "sale.receipt", "time": entries[-1]["time"], "receipt": receipt}
    )
    block_id = bytes.fromhex(genuine["commitment"]["block_id"])
    _, tree, game = operator.commit(
        genuine["commitment"],
        block_id=block_id,
        key=key,
        tiers=tiers,
        table=genuine["commitment"]["table"],
    )
    unit, ticket = operator.unit(
        genuine, block_id=block_id, key=key, tiers=tiers, tree=tree, game=game, position=position
    )
    return operator.proof(
        genuine,
        entries,
        commitment_index=genuine["log"]["commitment_entry"]["index"],
        receipt_index=len(entries) - 1,
        unit=unit,
        ticket=ticket,
    )


def reissued(
    shop: Shop,
    genuine: dict[str, Any],
    *,
    block_id: bytes,
    key: bytes,
    tiers: bytes,
    table: dict[str, Any],
    created_at: str | None = None,
) -> dict[str, Any]:
    """The genuine sale's proof, over a re-committed block: the log's commitment entry
    replaced by the forged one, every node recomputed, the head re-signed."""
    operator = shop.operator
    commitment, tree, game = operator.commit(
        genuine["commitment"],
        block_id=block_id,
        key=key,
        tiers=tiers,
        table=table,
        created_at=created_at,
    )
    entries = shop.pinned_entries()
    index = genuine["log"]["commitment_entry"]["index"]
    entries[index] = {**entries[index], "commitment": commitment}
    unit, ticket = operator.unit(
        genuine,
        block_id=block_id,
        key=key,
        tiers=tiers,
        tree=tree,
        game=game,
        position=genuine["unit"]["position"],
    )
    return operator.proof(
        genuine,
        entries,
        commitment_index=index,
        receipt_index=genuine["log"]["receipt_entry"]["index"],
        unit=unit,
        ticket=ticket,
    )


FORGED_PROOFS: dict[str, Callable[[Shop], dict[str, Any]]] = {
    "1 a 20 € prize re-mapped to 12 € in the table": table_remapped,
    "2 the block size changed": size_changed,
    "3 created_at backdated": created_at_backdated,
    "4 the block reshuffled, its root recomputed": reshuffled,
    "5 a whole block fabricated, a 16 000 € proof minted": block_fabricated,
    "6 a proof for a unit never sold": never_sold,
}


@pytest.mark.parametrize("forgery", FORGED_PROOFS)
def test_a_forged_proof_valid_by_itself_fails_against_the_pinned_head_and_the_log(
    shop: Shop, forgery: str
) -> None:
    genuine = shop.write("genuine.json", shop.proofs[0])
    assert grattage("verify-ticket", genuine, "--sth", shop.pinned).returncode == 0
    forged = shop.write("forged.json", FORGED_PROOFS[forgery](shop))
    alone = grattage("verify-ticket", forged)
    assert alone.returncode == 0, alone.stderr  # every signature is the operator's own
    assert "UNPINNED" in alone.stdout
    for pin in (("--sth", shop.pinned), ("--log", shop.base)):
        refused = grattage("verify-ticket", forged, *pin)
        assert refused.returncode == 1, (pin, refused.stdout, refused.stderr)
        assert refused.stderr.startswith("grattage: error: ")
        assert len(refused.stderr.strip().splitlines()) == 1


# -- forgeries in the operator's database, caught by a monitor ----------------------------
def test_7_a_receipt_inserted_afterwards_is_named_by_the_monitor(own_shop: Shop) -> None:
    shop = own_shop
    genuine = shop.proofs[0]["receipt"]
    _, tiers = shop.operator.block_secrets(shop.block_row)
    winner = best_unsold(tiers)
    minted = shop.operator.receipt(genuine, ticket_id=genuine["ticket_id"] + 1000, sequence=2,
                                   position=winner)  # fmt: skip
    platform = shop.world.platform
    with platform.uow.write() as repos:  # "sold early": a sale claimed between sales 2 and 3
        transparency.queue_entry(repos, platform.clock.now(), "sale.receipt", {"receipt": minted})
    head = transparency.integrate_all(platform)
    assert head is not None
    caught = grattage("monitor", shop.base, "--state", shop.state)
    assert caught.returncode == 1, caught.stdout
    assert f"entry {head.tree_size - 1}:" in caught.stderr
    assert f"sequence 2 where {SOLD} was next" in caught.stderr


def edit_a_receipt(entries: list[dict[str, Any]], operator: Operator, position: int) -> int:
    """Re-sign the fourth sale's receipt for another buyer (a sale handed to a player of the
    operator's choosing); the index of its entry. Giving it another unit instead (``position``,
    kept for the callers) is named at once by the monitor's rule that the n-th sale takes unit
    n (tests/unit/test_log_audit.py), so these forgeries keep every rule and change a buyer."""
    del position
    receipts = [i for i, entry in enumerate(entries) if entry["kind"] == "sale.receipt"]
    index = receipts[3]
    entries[index]["receipt"] = operator.receipt(entries[index]["receipt"], player="ee" * 16)
    return index


def test_8_a_receipt_edited_in_the_database_is_caught_by_a_monitor_and_the_pinned_head(
    own_shop: Shop,
) -> None:
    shop = own_shop
    operator = shop.operator
    _, tiers = operator.block_secrets(shop.block_row)
    winner = best_unsold(tiers)
    edited: list[int] = []
    operator.rewrite_log(
        lambda entries: edited.append(edit_a_receipt(entries, operator, winner)),
        recompute=False,
    )
    fresh = grattage("monitor", shop.base, "--state", shop.directory / "fresh.json")
    assert fresh.returncode == 1
    assert "do not hash to the signed root" in fresh.stderr
    # the whole tree recomputed and the head re-signed: consistent in itself, but not with
    # what the monitor saw, nor with the head the player pinned
    operator.rewrite_log(
        lambda entries: edited.append(edit_a_receipt(entries, operator, winner)), recompute=True
    )
    caught = grattage("monitor", shop.base, "--state", shop.state)
    assert caught.returncode == 1
    assert "forked" in caught.stderr
    sale = shop.proofs[3]["receipt"]["ticket_id"]
    size = json.loads(shop.pinned.read_text("utf-8"))["tree_size"]
    served = shop.write("served.json", shop.proof(sale, size))
    refused = grattage("verify-ticket", served, "--sth", shop.pinned)
    assert refused.returncode == 1, refused.stdout  # the edited receipt is not in the pinned tree
    assert refused.stderr.startswith("grattage: error: ")


def test_9_a_head_not_consistent_with_the_pinned_one_is_refused(own_shop: Shop) -> None:
    shop = own_shop
    operator = shop.operator
    kept = shop.write("kept.json", shop.proofs[5])
    assert grattage("verify-ticket", kept, "--log", shop.base).returncode == 0

    def backdate(entries: list[dict[str, Any]]) -> None:
        index = next(i for i, e in enumerate(entries) if e["kind"] == "block.commitment")
        genuine = shop.proofs[0]
        key, tiers = operator.block_secrets(shop.block_row)
        created = entries[index]["commitment"]["created_at"]
        entries[index]["commitment"] = operator.commit(
            entries[index]["commitment"],
            block_id=bytes.fromhex(genuine["commitment"]["block_id"]),
            key=key,
            tiers=tiers,
            table=genuine["commitment"]["table"],
            created_at=f"{int(created[:4]) - 1}{created[4:]}",
        )[0]

    operator.rewrite_log(backdate, recompute=True)
    shop.buy(2)  # the log grows on from the rewritten tree
    shop.proof(shop.proofs[0]["receipt"]["ticket_id"])
    refused = grattage("verify-ticket", kept, "--log", shop.base)
    assert refused.returncode == 1, refused.stdout
    # the log's head has grown past the kept proof's (does not extend it), or not yet (a head
    # of the same size with another root): a fork either way
    assert "does not extend the proof's head" in refused.stderr or "split view" in refused.stderr
    caught = grattage("monitor", shop.base, "--state", shop.state)
    assert caught.returncode == 1
    # same race as above: the monitor's pinned head is either outgrown by a tree that does not
    # extend it, or met by a head of its own size with another root
    assert (
        "not consistent with the head" in caught.stderr or "the log was forked" in caught.stderr
    ), caught.stderr


def test_10_a_forked_log_two_heads_of_one_size_is_caught_by_monitor_compare(
    own_shop: Shop,
) -> None:
    shop = own_shop
    operator = shop.operator
    _, tiers = operator.block_secrets(shop.block_row)
    winner = best_unsold(tiers)
    operator.rewrite_log(lambda entries: edit_a_receipt(entries, operator, winner), recompute=True)
    other = shop.directory / "other-monitor.json"
    assert grattage("monitor", shop.base, "--state", other).returncode == 0  # a newcomer's view
    split = grattage("monitor", "compare", shop.state, other, "--log", shop.base)
    assert split.returncode == 1, split.stdout
    assert "split view" in split.stderr
    same = grattage("monitor", "compare", other, other, "--log", shop.base)
    assert same.returncode == 0, same.stderr
