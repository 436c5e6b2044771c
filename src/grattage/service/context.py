"""What every use case works with: storage, keys, time and the operator's policy."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from grattage.blocks.draw_records import is_drawn
from grattage.blocks.operator_chain import LinkCursor, open_chain
from grattage.blocks.signing import Signer
from grattage.clock import Clock, SystemClock
from grattage.errors import InvalidPrizeTable, NotFound
from grattage.games import Game, find_game, rules_versions
from grattage.games.table import table_from_dict
from grattage.service.draw_port import WitnessPort
from grattage.service.drawer_seen import DrawerSeen
from grattage.service.model import Block
from grattage.service.ports import Repositories, UnitOfWork
from grattage.service.tool_ports import ExclusionRegister, KeyStore, PasswordHasher


class Policy(Protocol):
    """The operator's choices the use cases follow, read-only. Their defaults and bounds live
    in one place, :class:`grattage.settings.Settings`, which satisfies this protocol and is
    what the platform is built with; the service never sees where they came from."""

    @property
    def inactivity_seconds(self) -> int:
        """A ticket of a game that reveals after inactivity, untouched this long, is revealed."""
        ...

    @property
    def abandon_seconds(self) -> int:
        """A ticket of any game untouched this long is finished by the system."""
        ...

    @property
    def session_idle_seconds(self) -> int: ...
    @property
    def lockout_threshold(self) -> int: ...
    @property
    def lockout_seconds(self) -> int: ...
    @property
    def trusted_device_days(self) -> int: ...
    @property
    def demo_deposit_max_cents(self) -> int: ...
    @property
    def try_balance_cents(self) -> int: ...
    @property
    def try_session_hours(self) -> int: ...
    @property
    def try_session_max_tickets(self) -> int: ...
    @property
    def password_time_cost(self) -> int: ...
    @property
    def password_memory_kib(self) -> int: ...
    @property
    def deposit_limit_default_cents(self) -> int: ...
    @property
    def deposit_limit_max_cents(self) -> int: ...
    @property
    def stake_limit_default_cents(self) -> int: ...
    @property
    def stake_limit_max_cents(self) -> int: ...
    @property
    def limit_cooling_off_seconds(self) -> int: ...
    @property
    def reality_check_minutes(self) -> int: ...
    @property
    def operator_time_zone(self) -> str:
        """An IANA time zone: ages and birth dates are counted on the operator's date."""
        ...

    @property
    def close_block_when_top_prize_sold(self) -> bool:
        """Close a block, in the sale's transaction, once its top prize is sold out."""
        ...

    @property
    def job_stale_seconds(self) -> float:
        """A running background job whose heartbeat is older than this is marked failed."""
        ...

    @property
    def draw_margin_ms(self) -> int:
        """A drawn sale names the first beacon round at least this long after it: the time
        its receipt has to be logged and cosigned before the round is published."""
        ...


StakeCheck = Callable[[Repositories, int, str, int, datetime], None]
"""``check(repos, player_id, game, stake_cents, now)`` runs in the purchase's transaction before
the stake is debited and raises (e.g. LimitReached) to refuse it: the responsible-gaming hook."""


@dataclass(frozen=True)
class LoadedBlock:
    """The parts of a block that never change, with its game bound to its table and its key."""

    id: int
    game: Game
    key: bytes
    chunk_units: int
    block: Block
    public_id: bytes | None = None
    """The block's id in its commitment (16 bytes), which receipts and the log name."""
    drawn: bool = False
    """Whether its commitment says its units are drawn (docs/draw.md): a sale takes an index,
    and its unit is drawn once its beacon round is published."""


@dataclass
class Platform:
    uow: UnitOfWork
    keys: KeyStore
    policy: Policy = field(repr=False)  # the settings it comes from may hold a database password
    clock: Clock = field(default_factory=SystemClock)
    stake_checks: list[StakeCheck] = field(default_factory=list)
    passwords: PasswordHasher = field(kw_only=True)
    exclusion_register: ExclusionRegister | None = field(default=None, kw_only=True)
    """The national exclusion register; None: the operator has none (a test, a demo)."""
    witness: WitnessPort | None = field(default=None, kw_only=True)
    """The independent witness whose beacon draws the units of new blocks; None: blocks are
    committed undrawn (sale n takes unit n), as before issue 15."""
    open_blocks_seen: dict[str, tuple[datetime, list[int]]] = field(
        default_factory=dict, repr=False
    )
    """A hint only: the open blocks of each game as a sale last saw them, and when (see
    :mod:`grattage.service.block_lifecycle`)."""
    drawer_seen: DrawerSeen = field(default_factory=DrawerSeen, repr=False)
    """Whether a drawer holds the draw's lease, read at most once a second (drawer_seen)."""
    _blocks: dict[int, LoadedBlock] = field(default_factory=dict, repr=False)
    _games: dict[tuple[str, str | None], Game] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _signers: dict[str | None, Signer] = field(default_factory=dict, repr=False)
    _cursors: dict[int, LinkCursor] = field(default_factory=dict, repr=False)
    signing_key_hint: str | None = field(default=None, repr=False)
    """A hint only: the operator key (its id; None the first key) this process last saw in
    force. A sale signs with it and queues its receipt only if it still is."""

    def signer_of(self, key_id: str | None) -> Signer:
        """The operator's signing key ``key_id`` (None: the first key), read once."""
        with self._lock:
            signer = self._signers.get(key_id)
        if signer is None:
            signer = Signer(self.keys.operator_key(key_id))
            with self._lock:
                self._signers[key_id] = signer
        return signer

    def signer(self, repos: Repositories | None = None, *, hold: bool = False) -> Signer:
        """The operator key in force (commitments, receipts, tree heads): read in ``repos``'s
        transaction, or in a read of its own. ``hold`` keeps it in force until that
        transaction ends: whatever signs a document for the log holds it, so that no rotation
        commits between the signature and the document's place in the queue (docs/fairness.md,
        "Key rotation"). Every process follows a rotation at its next transaction."""
        if repos is None:
            with self.uow.read() as reading:
                return self.signer_of(reading.log.signing_key_id(hold=False))
        return self.signer_of(repos.log.signing_key_id(hold=hold))

    def game_for_table(self, table_json: str, rules_version: str | None = None) -> Game:
        """The game bound to a stored table under ``rules_version`` (a stored block's), cached:
        preparing a game is not free.

        None is for readers of the table and the game's fixed facts only (figures, lobby): the
        newest rules version that accepts the table — a block made under design-v1 may hold a
        table today's rules refuse, and its figures must still show."""
        cache_key = (table_json, rules_version)
        with self._lock:
            game = self._games.get(cache_key)
        if game is None:
            table = table_from_dict(json.loads(table_json))
            versions = (rules_version,) if rules_version else rules_versions(table.game)[::-1]
            for version in versions:
                try:
                    game = find_game(table.game, table, rules_version=version)
                    break
                except InvalidPrizeTable:
                    if version == versions[-1]:
                        raise
            assert game is not None
            with self._lock:
                self._games[cache_key] = game
        return game

    def loaded_block(self, repos: Repositories, block_id: int) -> LoadedBlock:
        with self._lock:
            loaded = self._blocks.get(block_id)
        if loaded is not None:
            return loaded
        block = repos.blocks.get(block_id)
        if block is None:
            raise NotFound(f"no block {block_id!r}")
        stored = repos.blocks.commitment(block_id)
        loaded = LoadedBlock(
            id=block.id,
            game=self.game_for_table(block.table_json, block_rules_version(repos, block.id)),
            key=self.keys.get(block.key_id),
            chunk_units=block.chunk_units,
            block=block,
            public_id=None if stored is None else bytes.fromhex(json.loads(stored[0])["block_id"]),
            drawn=stored is not None and is_drawn(json.loads(stored[0])),
        )
        if block.commitment_index is not None or stored is None or _is_v1(stored[0]):
            with self._lock:  # a block not yet in the log is read again until it is
                self._blocks[block_id] = loaded
        return loaded

    def link_cursor(self, repos: Repositories, loaded: LoadedBlock) -> LinkCursor:
        """The block's operator chain, read in increasing order (one hash per draw)."""
        with self._lock:
            cursor = self._cursors.get(loaded.id)
        if cursor is None:
            stored = repos.draws.checkpoints(loaded.id)
            if stored is None:
                raise NotFound(f"block {loaded.id!r} is not drawn: it has no chain")
            cursor = LinkCursor(open_chain(loaded.key, *stored))
            with self._lock:
                self._cursors[loaded.id] = cursor
        return cursor


def block_rules_version(repos: Repositories, block_id: int) -> str | None:
    """The rules version a stored block was committed with: its commitment's, or None (today's
    rules) for a block stored without one (no commitment bound how its tickets look)."""
    stored = repos.blocks.commitment(block_id)
    if stored is None:
        return None
    version = json.loads(stored[0]).get("rules_version")
    return version if isinstance(version, str) else None


def _is_v1(commitment_json: str) -> bool:
    return bool(json.loads(commitment_json).get("format") == "grattage-commitment/1")
