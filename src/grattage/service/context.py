"""What every use case works with: storage, keys, time and the operator's policy."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from grattage.clock import Clock, SystemClock
from grattage.errors import NotFound
from grattage.games import Game, find_game
from grattage.games.table import table_from_dict
from grattage.service.model import Block
from grattage.service.ports import KeyStore, PasswordHasher, Repositories, UnitOfWork


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
    def demo_deposit_max_cents(self) -> int: ...
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


@dataclass
class Platform:
    uow: UnitOfWork
    keys: KeyStore
    policy: Policy = field(repr=False)  # the settings it comes from may hold a database password
    clock: Clock = field(default_factory=SystemClock)
    stake_checks: list[StakeCheck] = field(default_factory=list)
    passwords: PasswordHasher = field(kw_only=True)
    open_blocks_seen: dict[str, tuple[datetime, list[int]]] = field(
        default_factory=dict, repr=False
    )
    """A hint only: the open blocks of each game as a sale last saw them, and when (see
    :mod:`grattage.service.block_lifecycle`)."""
    _blocks: dict[int, LoadedBlock] = field(default_factory=dict, repr=False)
    _games: dict[str, Game] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def game_for_table(self, table_json: str) -> Game:
        """The game bound to a stored table (cached: preparing a game is not free)."""
        with self._lock:
            game = self._games.get(table_json)
        if game is None:
            table = table_from_dict(json.loads(table_json))
            game = find_game(table.game, table)
            with self._lock:
                self._games[table_json] = game
        return game

    def loaded_block(self, repos: Repositories, block_id: int) -> LoadedBlock:
        with self._lock:
            loaded = self._blocks.get(block_id)
        if loaded is not None:
            return loaded
        block = repos.blocks.get(block_id)
        if block is None:
            raise NotFound(f"no block {block_id!r}")
        loaded = LoadedBlock(
            id=block.id,
            game=self.game_for_table(block.table_json),
            key=self.keys.get(block.key_id),
            chunk_units=block.chunk_units,
            block=block,
        )
        with self._lock:
            self._blocks[block_id] = loaded
        return loaded
