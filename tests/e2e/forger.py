"""An operator that cheats, for tests/e2e/test_forgeries.py: it holds the signing key and the
block keys, reads and rewrites its own database, and re-signs whatever it forges.

Everything here is what the operator can do; nothing here is what a verifier does."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from grattage.blocks.commitment import BlockTree, build_tree, unit_audit_path
from grattage.blocks.merkle import CHUNK_LEAVES
from grattage.blocks.proofs_v2 import make_commitment, make_receipt, tier_prizes
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import design_unit
from grattage.blocks.signing import Signer, TreeHead, canonical_json
from grattage.blocks.tlog import Frontier, entry_leaf_hash, inclusion_path
from grattage.games import find_game
from grattage.games.table import table_from_dict
from grattage.service import fairness
from support import World

GRATTAGE = str(Path(sys.executable).parent / "grattage")


def grattage(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command line as a person runs it: a process of its own."""
    return subprocess.run(
        [GRATTAGE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def get_all_entries(base: str) -> list[dict[str, Any]]:
    size = httpx.get(f"{base}/api/log/sth").json()["tree_size"]
    entries: list[dict[str, Any]] = []
    while len(entries) < size:
        page = httpx.get(
            f"{base}/api/log/entries", params={"start": len(entries), "end": size - 1}
        ).json()["entries"]
        entries += [item["entry"] for item in page]
    return entries


class SignedLog:
    """A whole log rebuilt from its entries, its head signed by the operator."""

    def __init__(self, signer: Signer, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.nodes: dict[tuple[int, int], bytes] = {}
        frontier = Frontier()
        for entry in entries:
            leaf = entry_leaf_hash(canonical_json(entry))
            self.nodes[(0, frontier.size)] = leaf
            for level, index, digest in frontier.append(leaf):
                self.nodes[(level, index)] = digest
        self.frontier = frontier
        self.head: TreeHead = signer.sign_tree_head(
            frontier.size, int(time.time() * 1000), frontier.root()
        )

    def logged(self, index: int) -> dict[str, Any]:
        path = inclusion_path(lambda lv, ix: self.nodes[(lv, ix)], index, self.head.tree_size)
        return {"index": index, "entry": self.entries[index], "path": [h.hex() for h in path]}


class Operator:
    def __init__(self, world: World, base: str) -> None:
        self.world = world
        self.base = base
        self.signer = Signer((world.settings.key_dir / "operator-ed25519.key").read_bytes())

    # -- what it knows ----------------------------------------------------------------
    def block_secrets(self, block_row: int) -> tuple[bytes, bytes]:
        """The block's key and every unit's tier (the operator reads its own key store)."""
        platform = self.world.platform
        with platform.uow.read() as repos:
            loaded = platform.loaded_block(repos, block_row)
            tiers = fairness._read_tiers(repos, loaded.block, loaded.key, 0, loaded.block.size)
        return loaded.key, tiers

    # -- what it forges ---------------------------------------------------------------
    def commit(
        self,
        commitment: dict[str, Any],
        *,
        block_id: bytes,
        key: bytes,
        tiers: bytes,
        table: dict[str, Any],
        created_at: str | None = None,
    ) -> tuple[dict[str, Any], BlockTree, Any]:
        game = find_game(
            commitment["game"], table_from_dict(table), rules_version=commitment["rules_version"]
        )
        tree = build_tree(block_id, key, tiers, workers=1, tier_prizes=tier_prizes(game.table))
        signed = make_commitment(
            self.signer,
            block_id,
            game,
            commitment["price_cents"],
            tree.root,
            len(tiers),
            created_at or commitment["created_at"],
        )
        return signed, tree, game

    def unit(
        self,
        genuine: dict[str, Any],
        *,
        block_id: bytes,
        key: bytes,
        tiers: bytes,
        tree: BlockTree,
        game: Any,
        position: int,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The unit part of a proof and the ticket redesigned for its (forged) prize."""
        tier = tiers[position]
        prize = game.table.prize_of_tier(tier)
        salt = unit_salt(key, position)
        first = position - position % CHUNK_LEAVES
        path = unit_audit_path(
            block_id,
            key,
            position,
            tiers[first : first + CHUNK_LEAVES],
            tree.chunk_roots,
            tier_prizes(game.table),
        )
        choice = genuine["unit"]["choice"]
        ticket = {**genuine["ticket"], **design_unit(game, salt, prize, choice)}
        unit = {
            "position": position,
            "tier": tier,
            "prize_cents": prize,
            "salt": salt.hex(),
            "choice": choice,
            "path": [node.hex() for node in path],
        }
        return unit, ticket

    def receipt(self, like: dict[str, Any], **changes: Any) -> dict[str, Any]:
        fields = {
            name: like[name]
            for name in (
                "ticket_id",
                "player",
                "sequence",
                "position",
                "stake_cents",
                "time",
                "commitment_index",
            )
        }
        fields["block_id"] = bytes.fromhex(like["block_id"])
        fields.update(changes)
        return make_receipt(self.signer, **fields)

    def proof(
        self,
        genuine: dict[str, Any],
        entries: list[dict[str, Any]],
        *,
        commitment_index: int,
        receipt_index: int,
        unit: dict[str, Any],
        ticket: dict[str, Any],
    ) -> dict[str, Any]:
        """A complete v2 proof over a log the operator rebuilt and signed."""
        log = SignedLog(self.signer, entries)
        forged = copy.deepcopy(genuine)
        forged.update(
            commitment=entries[commitment_index]["commitment"],
            receipt=entries[receipt_index]["receipt"],
            unit=unit,
            ticket=ticket,
            log={
                "sth": log.head.to_json(),
                "commitment_entry": log.logged(commitment_index),
                "receipt_entry": log.logged(receipt_index),
            },
        )
        return forged

    # -- what it does to its database ---------------------------------------------------
    def rewrite_log(
        self, change: Callable[[list[dict[str, Any]]], None], *, recompute: bool
    ) -> None:
        """Rewrite logged entries with the owner's rights (the append-only triggers dropped).
        With ``recompute``, also every leaf and node, and re-sign one head of the same size:
        a log consistent in itself, which only someone who saw the old one can catch."""
        entries = get_all_entries(self.base)
        change(entries)
        log = SignedLog(self.signer, entries)
        engine = self.world.platform.uow.engine  # type: ignore[attr-defined]
        with engine.begin() as connection:
            if connection.dialect.name == "sqlite":
                for table in ("log_entries", "log_nodes", "log_heads"):
                    for action in ("update", "delete"):
                        connection.execute(text(f"DROP TRIGGER IF EXISTS {table}_no_{action}"))
            else:
                for table in ("log_entries", "log_nodes", "log_heads"):
                    connection.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
            for index, entry in enumerate(entries):
                if not recompute:
                    connection.execute(
                        text("UPDATE log_entries SET body = :body WHERE idx = :idx"),
                        {"body": canonical_json(entry).decode("ascii"), "idx": index},
                    )
                    continue
                connection.execute(
                    text("UPDATE log_entries SET body = :body, leaf = :leaf WHERE idx = :idx"),
                    {
                        "body": canonical_json(entry).decode("ascii"),
                        "leaf": log.nodes[(0, index)],
                        "idx": index,
                    },
                )
            if not recompute:
                return
            for (level, index), digest in log.nodes.items():
                if level > 0:
                    connection.execute(
                        text("UPDATE log_nodes SET hash = :hash WHERE level = :lv AND idx = :ix"),
                        {"hash": digest, "lv": level, "ix": index},
                    )
            connection.execute(text("DELETE FROM log_heads"))
            head = log.head
            connection.execute(
                text(
                    "INSERT INTO log_heads (tree_size, timestamp_ms, root, key_id, signature) "
                    "VALUES (:size, :ts, :root, :key_id, :signature)"
                ),
                {
                    "size": head.tree_size,
                    "ts": head.timestamp_ms,
                    "root": head.root_hash,
                    "key_id": head.key_id,
                    "signature": head.signature,
                },
            )
