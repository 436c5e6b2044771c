"""SQLAlchemy Core repositories: one connection, one transaction, no ORM session.

Every statement that moves money or a counter is one atomic ``UPDATE … RETURNING`` whose
``WHERE`` re-checks the rule (enough balance, units left, still playing), so concurrent
transactions on PostgreSQL cannot both pass it, and SQLite's single writer never needs to.
"""

from __future__ import annotations

import time
from datetime import date, datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError

from grattage.adapters.driver_sql import DriverSql, db_time, from_db_time
from grattage.adapters.tables import (
    UtcDateTime,
    accounts,
    block_chunks,
    block_commitments,
    blocks,
    emissions,
    entries,
    idempotency_keys,
    movements,
    players,
    sessions,
    tickets,
)
from grattage.errors import AlreadyExists, InsufficientBalance, NotOnSale, SoldOut
from grattage.service.model import (
    Block,
    BlockState,
    FinishedBy,
    Leg,
    Mode,
    MovementKind,
    Player,
    SessionRow,
    Ticket,
    Unit,
)

_MAX_UNIT_ATTEMPTS = 50
_OPEN_HINT_SECONDS = 5.0

_PLAYER_ACCOUNT_SQL = DriverSql(
    "SELECT id, balance_cents FROM accounts WHERE player_id = :player_id"
)
_FIND_SESSION_SQL = DriverSql(
    """SELECT sessions.id, sessions.player_id, players.email, sessions.last_seen_at,
              sessions.created_at, player_limits.reality_checked_at
       FROM sessions JOIN players ON players.id = sessions.player_id
       LEFT JOIN player_limits ON player_limits.player_id = sessions.player_id
       WHERE sessions.token_hash = :token_hash"""
)
_CHANGE_PLAYER_BALANCE_SQL = DriverSql(
    """UPDATE accounts SET balance_cents = balance_cents + :amount
       WHERE id = :account_id AND kind = 'player' AND balance_cents + :amount >= 0
       RETURNING balance_cents"""
)
_INSERT_MOVEMENT_SQL = DriverSql(
    """INSERT INTO movements (kind, player_id, ticket_id, created_at)
       VALUES (:kind, :player_id, :ticket_id, :created_at) RETURNING id"""
)
_LOCK_PLAYER_ACCOUNT_SQL = DriverSql("SELECT id FROM accounts WHERE id = :account_id FOR UPDATE")


@cache
def _insert_entries_sql(legs: int) -> DriverSql:
    """One INSERT for all the legs of a movement (an executemany costs one call per row)."""
    rows = ", ".join(f"(:movement_id, :account{leg}, :amount{leg})" for leg in range(legs))
    return DriverSql(f"INSERT INTO entries (movement_id, account_id, amount_cents) VALUES {rows}")


_OPEN_BLOCKS_SQL = DriverSql(
    """SELECT id FROM blocks WHERE game = :game AND state = 'open' AND sold < size
       ORDER BY id LIMIT 16"""
)
_TAKE_UNIT_SQL = DriverSql(
    """UPDATE blocks SET sold = sold + 1
       WHERE id = :block_id AND state = 'open' AND sold < size RETURNING sold, size"""
)
_SEALED_TIER_SQL = DriverSql(
    """SELECT substr(sealed_tiers, :offset, 1) FROM block_chunks
       WHERE block_id = :block_id AND chunk = :chunk"""
)
_TICKET_COLUMNS = (
    "player_id, game, block_id, position, mode, sign, stake_cents, prize_cents, document, "
    "revealed, state, created_at, last_action_at, finished_at, finished_by, "
    "balance_before_cents, balance_after_cents"
)
_INSERT_TICKET_SQL = DriverSql(
    f"INSERT INTO tickets ({_TICKET_COLUMNS}) VALUES "
    f"({', '.join(':' + name.strip() for name in _TICKET_COLUMNS.split(','))}) RETURNING id"
)


@cache
def _due_for_player_sql(games: int) -> DriverSql:
    placeholders = ", ".join(f":game{index}" for index in range(games)) or "NULL"
    return DriverSql(
        f"""SELECT id FROM tickets
            WHERE player_id = :player_id AND state = 'playing'
              AND (last_action_at <= :abandon_cutoff
                   OR (last_action_at <= :inactivity_cutoff AND game IN ({placeholders})))
            ORDER BY id LIMIT :limit"""
    )


# Built once: building a SQLAlchemy expression costs more than running it on SQLite.
_TICKET_BY_ID = select(tickets).where(tickets.c.id == bindparam("ticket_id"))
_TICKET_BY_ID_FOR_UPDATE = _TICKET_BY_ID.with_for_update()


def _due_query() -> Any:
    return (
        select(tickets.c.id)
        .where(
            tickets.c.state == "playing",
            or_(
                tickets.c.last_action_at <= bindparam("abandon_cutoff", type_=UtcDateTime),
                and_(
                    tickets.c.game.in_(bindparam("games", expanding=True)),
                    tickets.c.last_action_at <= bindparam("inactivity_cutoff", type_=UtcDateTime),
                ),
            ),
        )
        .order_by(tickets.c.id)
        .limit(bindparam("limit"))
    )


_DUE = _due_query()


class SqlPlayers:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, email: str, password_hash: str, birth_date: date, now: datetime) -> int:
        try:
            with self.db.begin_nested():
                row = self.db.execute(
                    insert(players)
                    .values(
                        email=email,
                        password_hash=password_hash,
                        birth_date=birth_date,
                        created_at=now,
                        failed_logins=0,
                    )
                    .returning(players.c.id)
                ).one()
        except IntegrityError:
            raise AlreadyExists(f"the e-mail address {email!r} is already registered") from None
        return int(row.id)

    def _one(self, where: Any) -> Player | None:
        row = self.db.execute(select(players).where(where)).first()
        if row is None:
            return None
        return Player(
            id=row.id,
            email=row.email,
            password_hash=row.password_hash,
            birth_date=row.birth_date,
            failed_logins=row.failed_logins,
            locked_until=row.locked_until,
        )

    def by_email(self, email: str) -> Player | None:
        return self._one(players.c.email == email)

    def by_id(self, player_id: int) -> Player | None:
        return self._one(players.c.id == player_id)

    def count_failed_login(self, player_id: int, threshold: int, lock_until: datetime) -> int:
        failed = self.db.execute(
            update(players)
            .where(players.c.id == player_id)
            .values(failed_logins=players.c.failed_logins + 1)
            .returning(players.c.failed_logins)
        ).scalar_one()
        if failed >= threshold:
            self.db.execute(
                update(players)
                .where(players.c.id == player_id)
                .values(locked_until=lock_until, failed_logins=0)
            )
        return int(failed)

    def clear_failed_logins(self, player_id: int) -> None:
        self.db.execute(
            update(players)
            .where(players.c.id == player_id)
            .values(failed_logins=0, locked_until=None)
        )


class SqlSessions:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, token_hash: str, player_id: int, now: datetime) -> None:
        self.db.execute(
            insert(sessions).values(
                token_hash=token_hash, player_id=player_id, created_at=now, last_seen_at=now
            )
        )

    def find(self, token_hash: str) -> SessionRow | None:
        row = _FIND_SESSION_SQL(self.db, {"token_hash": token_hash}).first()
        if row is None:
            return None
        session_id, player_id, email, last_seen_at, created_at, reality_checked_at = row
        return SessionRow(
            id=session_id,
            player_id=player_id,
            email=email,
            last_seen_at=from_db_time(last_seen_at),
            created_at=from_db_time(created_at),
            reality_checked_at=(
                None if reality_checked_at is None else from_db_time(reality_checked_at)
            ),
        )

    def touch(self, session_id: int, now: datetime) -> None:
        self.db.execute(
            update(sessions).where(sessions.c.id == session_id).values(last_seen_at=now)
        )

    def delete(self, token_hash: str) -> None:
        self.db.execute(sessions.delete().where(sessions.c.token_hash == token_hash))


class SqlLedger:
    def __init__(
        self, connection: Connection, house_ids: dict[str, int], account_ids: dict[int, int]
    ) -> None:
        self.db = connection
        self._house_ids = house_ids
        self._account_ids = account_ids

    def player_account_id(self, player_id: int) -> int:
        account_id = self._account_ids.get(player_id)
        if account_id is None:
            account_id = self.player_account(player_id)[0]
            self._account_ids[player_id] = account_id
        return account_id

    def open_player_account(self, player_id: int) -> int:
        return int(
            self.db.execute(
                insert(accounts)
                .values(
                    name=f"player:{player_id}", kind="player", player_id=player_id, balance_cents=0
                )
                .returning(accounts.c.id)
            ).scalar_one()
        )

    def player_account(self, player_id: int) -> tuple[int, int]:
        row = _PLAYER_ACCOUNT_SQL(self.db, {"player_id": player_id}).one()
        return int(row[0]), int(row[1])

    def lock_player_account(self, account_id: int) -> None:
        """Hold the wallet's row until the transaction ends.

        SQLite has nothing to do: a write transaction there (BEGIN IMMEDIATE) already excludes
        every other writer."""
        if self.db.dialect.name != "sqlite":
            _LOCK_PLAYER_ACCOUNT_SQL(self.db, {"account_id": account_id}).one()

    def house_account(self, name: str) -> int:
        cached = self._house_ids.get(name)
        if cached is None:
            cached = int(
                self.db.execute(select(accounts.c.id).where(accounts.c.name == name)).scalar_one()
            )
            self._house_ids[name] = cached
        return cached

    def post(
        self,
        kind: MovementKind,
        legs: list[Leg],
        now: datetime,
        player_id: int | None = None,
        ticket_id: int | None = None,
    ) -> dict[int, int]:
        balances = self.apply(legs)
        self.record(kind, legs, now, player_id, ticket_id)
        return balances

    def apply(self, legs: list[Leg]) -> dict[int, int]:
        """Update the players' running balances; house accounts keep none.

        A house account is on every sale, so a running balance there would be a row every
        purchase locks (a queue on PostgreSQL, a deadlock risk between a sale and a prize);
        its balance is the sum of its entries instead. A player's balance is checked and
        changed in one ``UPDATE … RETURNING``.
        """
        if sum(leg.amount_cents for leg in legs) != 0:
            raise ValueError(f"an unbalanced movement: {legs!r}")
        house = set(self._house_ids.values())
        balances: dict[int, int] = {}
        for leg in legs:
            if leg.account_id in house:
                continue
            new_balance = _CHANGE_PLAYER_BALANCE_SQL(
                self.db, {"account_id": leg.account_id, "amount": leg.amount_cents}
            ).scalar()
            if new_balance is None:
                raise InsufficientBalance(f"the balance cannot pay {-leg.amount_cents} cents")
            balances[leg.account_id] = int(new_balance)
        return balances

    def record(
        self,
        kind: MovementKind,
        legs: list[Leg],
        now: datetime,
        player_id: int | None = None,
        ticket_id: int | None = None,
    ) -> None:
        if sum(leg.amount_cents for leg in legs) != 0:
            raise ValueError(f"an unbalanced movement: {legs!r}")
        movement_id = _INSERT_MOVEMENT_SQL(
            self.db,
            {
                "kind": kind,
                "player_id": player_id,
                "ticket_id": ticket_id,
                "created_at": db_time(self.db, now),
            },
        ).scalar_one()
        parameters = {"movement_id": movement_id}
        for index, leg in enumerate(legs):
            parameters[f"account{index}"] = leg.account_id
            parameters[f"amount{index}"] = leg.amount_cents
        _insert_entries_sql(len(legs))(self.db, parameters)


def _block(row: Any) -> Block:
    return Block(
        id=row.id,
        emission_id=row.emission_id,
        game=row.game,
        key_id=row.key_id,
        size=row.size,
        sold=row.sold,
        state=row.state,
        chunk_units=row.chunk_units,
        table_json=row.table_json,
    )


_BLOCK_COLUMNS = (
    blocks.c.id,
    blocks.c.emission_id,
    blocks.c.game,
    blocks.c.key_id,
    blocks.c.size,
    blocks.c.sold,
    blocks.c.state,
    blocks.c.chunk_units,
    emissions.c.table_json,
)


class SqlBlocks:
    def __init__(
        self,
        connection: Connection,
        open_hints: dict[str, tuple[float, list[int]]] | None = None,
    ) -> None:
        self.db = connection
        # The open blocks of each game as last seen: tried first, which saves looking them up.
        self._open_hints: dict[str, tuple[float, list[int]]] = (
            {} if open_hints is None else open_hints
        )
        self.state_changes: list[tuple[int, BlockState, BlockState]] = []

    def add_emission(self, game: str, table_json: str, digest: str, now: datetime) -> int:
        return int(
            self.db.execute(
                insert(emissions)
                .values(game=game, table_json=table_json, table_digest=digest, created_at=now)
                .returning(emissions.c.id)
            ).scalar_one()
        )

    def add_block(
        self,
        *,
        emission_id: int,
        game: str,
        key_id: str,
        size: int,
        chunk_units: int,
        now: datetime,
    ) -> int:
        return int(
            self.db.execute(
                insert(blocks)
                .values(
                    emission_id=emission_id,
                    game=game,
                    key_id=key_id,
                    size=size,
                    sold=0,
                    state="pending",
                    chunk_units=chunk_units,
                    created_at=now,
                )
                .returning(blocks.c.id)
            ).scalar_one()
        )

    def add_chunk(self, block_id: int, chunk: int, sealed_tiers: bytes) -> None:
        self.db.execute(
            insert(block_chunks).values(block_id=block_id, chunk=chunk, sealed_tiers=sealed_tiers)
        )

    def _select(self) -> Any:
        return select(*_BLOCK_COLUMNS).join(emissions, emissions.c.id == blocks.c.emission_id)

    def get(self, block_id: int) -> Block | None:
        row = self.db.execute(self._select().where(blocks.c.id == block_id)).first()
        return None if row is None else _block(row)

    def all(self, game: str | None = None) -> list[Block]:
        query = self._select().order_by(blocks.c.id)
        if game is not None:
            query = query.where(blocks.c.game == game)
        return [_block(row) for row in self.db.execute(query)]

    def take_unit(self, game: str, spread: int = 0) -> Unit:
        seen_at, hinted = self._open_hints.get(game, (0.0, None))
        if time.monotonic() - seen_at > _OPEN_HINT_SECONDS:
            hinted = None  # look again now and then: the operator may have opened blocks
        for _ in range(_MAX_UNIT_ATTEMPTS):
            if hinted is None:
                hinted = [int(row[0]) for row in _OPEN_BLOCKS_SQL(self.db, {"game": game})]
                if not hinted:
                    # a suspended block halts the game: the next pending block stays pending
                    if self.withheld(game) or self.open_next_pending(game) is None:
                        raise self.not_on_sale(game)
                    continue
                self._open_hints[game] = (time.monotonic(), hinted)
            # Buyers spread over the open blocks: on PostgreSQL a block's counter is a row
            # every sale from it locks until its commit.
            candidate = hinted[spread % len(hinted)]
            taken = _TAKE_UNIT_SQL(self.db, {"block_id": candidate}).first()
            if taken is None:
                hinted = None  # exhausted or closed meanwhile: look again
                self._open_hints.pop(game, None)
                continue
            sold, size = int(taken[0]), int(taken[1])
            if sold == size:
                self._open_hints.pop(game, None)
                self.set_state(candidate, "exhausted", only_from="open")
                self.open_next_pending(game)
            return Unit(block_id=candidate, position=sold - 1)
        raise SoldOut(f"{game}: no unit could be taken, try again")

    def sealed_tier(self, block: Block, position: int) -> bytes:
        chunk, offset = divmod(position, block.chunk_units)
        data = _SEALED_TIER_SQL(
            self.db, {"offset": offset + 1, "block_id": block.id, "chunk": chunk}
        ).scalar_one()
        return bytes(data)

    def sealed_tiers(self, block: Block, start: int, count: int) -> bytes:
        chunk, offset = divmod(start, block.chunk_units)
        data = self.db.execute(
            select(func.substr(block_chunks.c.sealed_tiers, offset + 1, count)).where(
                block_chunks.c.block_id == block.id, block_chunks.c.chunk == chunk
            )
        ).scalar_one()
        return bytes(data)

    def add_commitment(self, block_id: int, commitment: str, chunk_roots: bytes) -> None:
        self.db.execute(
            insert(block_commitments).values(
                block_id=block_id, commitment=commitment, chunk_roots=chunk_roots
            )
        )

    def commitment(self, block_id: int) -> tuple[str, bytes] | None:
        row = self.db.execute(
            select(block_commitments.c.commitment, block_commitments.c.chunk_roots).where(
                block_commitments.c.block_id == block_id
            )
        ).first()
        return None if row is None else (row.commitment, bytes(row.chunk_roots))

    def set_state(self, block_id: int, state: BlockState, only_from: BlockState) -> bool:
        changed = self.db.execute(
            update(blocks)
            .where(blocks.c.id == block_id, blocks.c.state == only_from)
            .values(state=state)
            .returning(blocks.c.id)
        ).first()
        if changed is not None:
            self.state_changes.append((block_id, only_from, state))
        return changed is not None

    def open_next_pending(self, game: str) -> int | None:
        pending = (
            select(blocks.c.id)
            .where(blocks.c.game == game, blocks.c.state == "pending")
            .order_by(blocks.c.id)
            .limit(1)
            .scalar_subquery()
        )
        opened = self.db.execute(
            update(blocks)
            .where(blocks.c.id == pending, blocks.c.state == "pending")
            .values(state="open")
            .returning(blocks.c.id)
        ).scalar()
        if opened is not None:
            self.state_changes.append((int(opened), "pending", "open"))
        return None if opened is None else int(opened)

    def has_open(self, game: str) -> bool:
        return (
            self.db.execute(
                select(blocks.c.id).where(blocks.c.game == game, blocks.c.state == "open").limit(1)
            ).first()
            is not None
        )

    def showcase(self, game: str) -> Block | None:
        row = self.db.execute(
            self._select()
            .where(blocks.c.game == game, blocks.c.state.in_(("open", "pending")))
            .order_by((blocks.c.state == "open").desc(), blocks.c.id)
            .limit(1)
        ).first()
        return None if row is None else _block(row)

    def units_left(self, game: str) -> int:
        left = self.db.execute(
            select(func.coalesce(func.sum(blocks.c.size - blocks.c.sold), 0)).where(
                blocks.c.game == game, blocks.c.state.in_(("open", "pending"))
            )
        ).scalar_one()
        return int(left)

    def drain_state_changes(self) -> list[tuple[int, BlockState, BlockState]]:
        """The state changes not yet written to the audit log, which this forgets."""
        changes, self.state_changes = self.state_changes, []
        return changes

    def withheld(self, game: str) -> bool:
        """Whether the operator suspended a block of the game."""
        return (
            self.db.execute(
                select(blocks.c.id)
                .where(blocks.c.game == game, blocks.c.state == "suspended")
                .limit(1)
            ).first()
            is not None
        )

    def not_on_sale(self, game: str) -> Exception:
        states = {
            state
            for (state,) in self.db.execute(
                select(blocks.c.state)
                .where(
                    blocks.c.game == game,
                    blocks.c.state.in_(("suspended", "closed")),
                    blocks.c.sold < blocks.c.size,
                )
                .distinct()
            )
        }
        if "suspended" in states:
            return NotOnSale(
                f"{game} is suspended by the operator: no ticket is on sale until it resumes"
            )
        if "closed" in states:
            return NotOnSale(f"{game} is closed by the operator: no ticket is on sale")
        return SoldOut(f"{game} is sold out: no open block has a ticket left")


def _ticket(row: Any) -> Ticket:
    return Ticket(**{name: getattr(row, name) for name in Ticket.__dataclass_fields__})


class SqlTickets:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(
        self,
        *,
        player_id: int,
        game: str,
        unit: Unit,
        mode: Mode,
        sign: str | None,
        stake_cents: int,
        prize_cents: int,
        document: str,
        now: datetime,
        balance_before_cents: int,
        balance_after_cents: int,
        finished_by: FinishedBy | None = None,
        revealed: str = "[]",
    ) -> int:
        values = {
            "player_id": player_id,
            "game": game,
            "block_id": unit.block_id,
            "position": unit.position,
            "mode": mode,
            "sign": sign,
            "stake_cents": stake_cents,
            "prize_cents": prize_cents,
            "document": document,
            "revealed": revealed,
            "state": "playing" if finished_by is None else "finished",
            "created_at": db_time(self.db, now),
            "last_action_at": db_time(self.db, now),
            "finished_at": None if finished_by is None else db_time(self.db, now),
            "finished_by": finished_by,
            "balance_before_cents": balance_before_cents,
            "balance_after_cents": balance_after_cents,
        }
        return int(_INSERT_TICKET_SQL(self.db, values).scalar_one())

    def get(self, ticket_id: int, for_update: bool = False) -> Ticket | None:
        query = _TICKET_BY_ID_FOR_UPDATE if for_update else _TICKET_BY_ID
        row = self.db.execute(query, {"ticket_id": ticket_id}).first()
        return None if row is None else _ticket(row)

    def set_revealed(self, ticket_id: int, revealed: str, now: datetime) -> None:
        self.db.execute(
            update(tickets)
            .where(tickets.c.id == ticket_id)
            .values(revealed=revealed, last_action_at=now)
        )

    def finish(self, ticket_id: int, revealed: str, now: datetime, finished_by: FinishedBy) -> bool:
        done = self.db.execute(
            update(tickets)
            .where(tickets.c.id == ticket_id, tickets.c.state == "playing")
            .values(
                state="finished",
                revealed=revealed,
                finished_at=now,
                finished_by=finished_by,
                last_action_at=now,
            )
            .returning(tickets.c.id)
        ).first()
        return done is not None

    def set_balance_after(self, ticket_id: int, balance_after_cents: int) -> None:
        self.db.execute(
            update(tickets)
            .where(tickets.c.id == ticket_id)
            .values(balance_after_cents=balance_after_cents)
        )

    def due(
        self,
        inactivity_cutoff: datetime,
        abandon_cutoff: datetime,
        inactivity_games: tuple[str, ...],
        player_id: int | None = None,
        limit: int = 500,
    ) -> list[int]:
        parameters = {
            "abandon_cutoff": abandon_cutoff,
            "inactivity_cutoff": inactivity_cutoff,
            "games": list(inactivity_games),
            "limit": limit,
        }
        if player_id is not None:
            raw = {
                "player_id": player_id,
                "abandon_cutoff": db_time(self.db, abandon_cutoff),
                "inactivity_cutoff": db_time(self.db, inactivity_cutoff),
                "limit": limit,
                **{f"game{index}": game for index, game in enumerate(inactivity_games)},
            }
            found = _due_for_player_sql(len(inactivity_games))(self.db, raw).scalars()
            return [int(ticket_id) for ticket_id in found]
        query = _DUE
        return [int(ticket_id) for ticket_id in self.db.execute(query, parameters).scalars()]

    def history(self, player_id: int, limit: int, before: int | None) -> list[Ticket]:
        query = (
            select(tickets)
            .where(tickets.c.player_id == player_id)
            .order_by(tickets.c.id.desc())
            .limit(limit)
        )
        if before is not None:
            query = query.where(tickets.c.id < before)
        return [_ticket(row) for row in self.db.execute(query)]

    def last(self, player_id: int) -> Ticket | None:
        found = self.history(player_id, 1, None)
        return found[0] if found else None


class SqlIdempotency:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def get(self, player_id: int, key: str) -> tuple[str, int | None] | None:
        row = self.db.execute(
            select(idempotency_keys.c.request_hash, idempotency_keys.c.ticket_id).where(
                idempotency_keys.c.player_id == player_id, idempotency_keys.c.key == key
            )
        ).first()
        return None if row is None else (row.request_hash, row.ticket_id)

    def add(self, player_id: int, key: str, request_hash: str, now: datetime) -> bool:
        dialect_insert = sqlite_insert if self.db.dialect.name == "sqlite" else postgresql_insert
        claimed = self.db.execute(
            dialect_insert(idempotency_keys)
            .values(player_id=player_id, key=key, request_hash=request_hash, created_at=now)
            .on_conflict_do_nothing()
            .returning(idempotency_keys.c.key)
        ).first()
        return claimed is not None

    def set_ticket(self, player_id: int, key: str, ticket_id: int) -> None:
        self.db.execute(
            update(idempotency_keys)
            .where(idempotency_keys.c.player_id == player_id, idempotency_keys.c.key == key)
            .values(ticket_id=ticket_id)
        )


def _rows(result: Any) -> list[Any]:
    return [tuple(row) for row in result]


class SqlAudit:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def balances_off_ledger(self) -> list[tuple[str, int, int]]:
        sums = (
            select(entries.c.account_id, func.sum(entries.c.amount_cents).label("total"))
            .group_by(entries.c.account_id)
            .subquery()
        )
        total = func.coalesce(sums.c.total, 0)
        return _rows(
            self.db.execute(
                select(accounts.c.name, accounts.c.balance_cents, total)
                .select_from(accounts.outerjoin(sums, sums.c.account_id == accounts.c.id))
                .where(accounts.c.kind == "player", accounts.c.balance_cents != total)
                .order_by(accounts.c.id)
            )
        )

    def entries_total(self) -> int:
        return int(
            self.db.execute(select(func.coalesce(func.sum(entries.c.amount_cents), 0))).scalar_one()
        )

    def unbalanced_movements(self) -> list[tuple[int, int]]:
        return _rows(
            self.db.execute(
                select(entries.c.movement_id, func.sum(entries.c.amount_cents))
                .group_by(entries.c.movement_id)
                .having(func.sum(entries.c.amount_cents) != 0)
                .order_by(entries.c.movement_id)
            )
        )

    def negative_player_balances(self) -> list[tuple[str, int]]:
        return _rows(
            self.db.execute(
                select(accounts.c.name, accounts.c.balance_cents).where(
                    accounts.c.kind == "player", accounts.c.balance_cents < 0
                )
            )
        )

    def _movement_counts(self, kind: str) -> Any:
        player_entries = entries.join(accounts, accounts.c.id == entries.c.account_id)
        return (
            select(
                movements.c.ticket_id,
                func.count(func.distinct(movements.c.id)).label("count"),
                func.coalesce(func.sum(entries.c.amount_cents), 0).label("amount"),
            )
            .select_from(
                movements.outerjoin(
                    player_entries,
                    and_(entries.c.movement_id == movements.c.id, accounts.c.kind == "player"),
                )
            )
            .where(movements.c.kind == kind, movements.c.ticket_id.is_not(None))
            .group_by(movements.c.ticket_id)
            .subquery()
        )

    def tickets_without_one_stake(self) -> list[tuple[int, int]]:
        stakes = self._movement_counts("stake")
        count = func.coalesce(stakes.c.count, 0)
        return _rows(
            self.db.execute(
                select(tickets.c.id, count)
                .select_from(tickets.outerjoin(stakes, stakes.c.ticket_id == tickets.c.id))
                .where(count != 1)
                .order_by(tickets.c.id)
            )
        )

    def stakes_off_price(self) -> list[tuple[int, int, int]]:
        stakes = self._movement_counts("stake")
        return _rows(
            self.db.execute(
                select(tickets.c.id, tickets.c.stake_cents, -stakes.c.amount)
                .select_from(tickets.join(stakes, stakes.c.ticket_id == tickets.c.id))
                .where(stakes.c.count == 1, -stakes.c.amount != tickets.c.stake_cents)
                .order_by(tickets.c.id)
            )
        )

    def winning_tickets_without_one_prize(self) -> list[tuple[int, int, int, int]]:
        prizes = self._movement_counts("prize")
        count = func.coalesce(prizes.c.count, 0)
        amount = func.coalesce(prizes.c.amount, 0)
        return _rows(
            self.db.execute(
                select(tickets.c.id, tickets.c.prize_cents, count, amount)
                .select_from(tickets.outerjoin(prizes, prizes.c.ticket_id == tickets.c.id))
                .where(
                    tickets.c.state == "finished",
                    tickets.c.prize_cents > 0,
                    or_(count != 1, amount != tickets.c.prize_cents),
                )
                .order_by(tickets.c.id)
            )
        )

    def prizes_on_tickets_not_owed(self) -> list[tuple[int, int]]:
        prizes = self._movement_counts("prize")
        return _rows(
            self.db.execute(
                select(prizes.c.ticket_id, prizes.c.amount)
                .select_from(prizes.outerjoin(tickets, tickets.c.id == prizes.c.ticket_id))
                .where(
                    or_(
                        tickets.c.id.is_(None),
                        tickets.c.state != "finished",
                        tickets.c.prize_cents == 0,
                    )
                )
                .order_by(prizes.c.ticket_id)
            )
        )

    def blocks_off_counter(self) -> list[tuple[int, int, int]]:
        sold = (
            select(tickets.c.block_id, func.count().label("count"))
            .group_by(tickets.c.block_id)
            .subquery()
        )
        count = func.coalesce(sold.c.count, 0)
        return _rows(
            self.db.execute(
                select(blocks.c.id, blocks.c.sold, count)
                .select_from(blocks.outerjoin(sold, sold.c.block_id == blocks.c.id))
                .where(blocks.c.sold != count)
                .order_by(blocks.c.id)
            )
        )

    def units_sold_twice(self) -> list[tuple[int, int, int]]:
        return _rows(
            self.db.execute(
                select(tickets.c.block_id, tickets.c.position, func.count())
                .group_by(tickets.c.block_id, tickets.c.position)
                .having(func.count() > 1)
            )
        )

    def units_beyond_counter(self) -> list[tuple[int, int, int]]:
        return _rows(
            self.db.execute(
                select(tickets.c.id, tickets.c.block_id, tickets.c.position)
                .join(blocks, blocks.c.id == tickets.c.block_id)
                .where(or_(tickets.c.position >= blocks.c.sold, tickets.c.position < literal(0)))
            )
        )
