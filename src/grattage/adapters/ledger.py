"""The double-entry ledger: the players' wallets, the house accounts and the movements.

Every movement is a transfer — one amount taken from one account and added to another — and
is stored as one row naming both (``from_account_id``, ``to_account_id``, ``amount_cents``),
its two legs (migration 0017)."""

from __future__ import annotations

from sqlalchemy import Connection, insert, select
from sqlalchemy.exc import DBAPIError

from grattage.adapters.db_time import to_db_time
from grattage.adapters.driver_sql import (
    CHANGE_PLAYER_BALANCE,
    INSERT_MOVEMENT,
    LOCK_ACCOUNT,
    LOCK_ACCOUNT_NOWAIT,
    PLAYER_ACCOUNT,
)
from grattage.adapters.errors import is_lock_not_available
from grattage.adapters.tables import accounts
from grattage.errors import InsufficientBalance, WalletBusy
from grattage.service.model import Leg, Movement


class HouseAccounts:
    """The ids of every ``kind = 'house'`` account, read once per process (they never change).

    Known by kind, all of them at once, so that a leg on any house account is recognised as
    the house's whichever way its id was found."""

    def __init__(self) -> None:
        self._by_name: dict[str, int] | None = None
        self._ids: frozenset[int] = frozenset()

    def _load(self, db: Connection) -> dict[str, int]:
        rows = db.execute(select(accounts.c.name, accounts.c.id).where(accounts.c.kind == "house"))
        by_name = {str(name): int(account_id) for name, account_id in rows}
        # The ids first: a thread that sees the names loaded reads the ids without a lock.
        self._ids = frozenset(by_name.values())
        self._by_name = by_name
        return by_name

    def ids(self, db: Connection) -> frozenset[int]:
        if self._by_name is None:
            self._load(db)
        return self._ids

    def id_of(self, db: Connection, name: str) -> int:
        by_name = self._by_name if self._by_name is not None else self._load(db)
        if name not in by_name:
            by_name = self._load(db)  # added since (a migration): read them again
        if name not in by_name:
            raise LookupError(f"no house account {name!r}")
        return by_name[name]


class SqlLedger:
    def __init__(
        self,
        connection: Connection,
        house: HouseAccounts,
        account_ids: dict[int, int],
        held_wallets: set[int] | None = None,
        wallets_without_waiting: bool = False,
    ) -> None:
        self.db = connection
        self._house = house
        self._account_ids = account_ids
        self._held = held_wallets if held_wallets is not None else set()
        # In a lane batch (adapters/lane_batch.py): a wallet held elsewhere is WalletBusy at
        # once, never waited for — the batch holds other wallets, which the holder may want.
        self._nowait = wallets_without_waiting

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
        row = PLAYER_ACCOUNT(self.db, {"player_id": player_id}).one()
        return int(row[0]), int(row[1])

    def lock_player_account(self, account_id: int) -> None:
        """Hold the wallet's row until the transaction ends.

        SQLite has nothing to do: a write transaction there (BEGIN IMMEDIATE) already excludes
        every other writer."""
        if self.db.dialect.name == "sqlite" or account_id in self._held:
            return
        if not self._nowait:
            LOCK_ACCOUNT(self.db, {"account_id": account_id}).one()
        else:
            try:
                LOCK_ACCOUNT_NOWAIT(self.db, {"account_id": account_id}).one()
            except DBAPIError as held:
                if not is_lock_not_available(held):
                    raise
                raise WalletBusy(
                    "the database is unavailable right now (a lock could not be had in time); "
                    "retry in a moment"
                ) from held
        self._held.add(account_id)

    def house_account(self, name: str) -> int:
        return self._house.id_of(self.db, name)

    def post(self, movement: Movement) -> dict[int, int]:
        balances = self.apply(movement.legs)
        self.record(movement)
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
        house = self._house.ids(self.db)
        balances: dict[int, int] = {}
        for leg in legs:
            if leg.account_id in house:
                continue
            if self._nowait:  # its UPDATE would wait for a held wallet
                self.lock_player_account(leg.account_id)
            new_balance = CHANGE_PLAYER_BALANCE(
                self.db, {"account_id": leg.account_id, "amount": leg.amount_cents}
            ).scalar()
            if new_balance is None:
                raise InsufficientBalance(f"the balance cannot pay {-leg.amount_cents} cents")
            balances[leg.account_id] = int(new_balance)
        return balances

    def record(self, movement: Movement) -> None:
        taken, given = _transfer(movement.legs)
        INSERT_MOVEMENT(
            self.db,
            {
                "amount": given.amount_cents,
                "created_at": to_db_time(movement.at, self.db.dialect),
                "player_id": movement.player_id,
                "ticket_id": movement.ticket_id,
                "from_account": taken.account_id,
                "to_account": given.account_id,
                "kind": movement.kind,
            },
        )


def _transfer(legs: list[Leg]) -> tuple[Leg, Leg]:
    """The leg taken from and the leg given to: a movement is exactly these two, balanced,
    between two accounts (what one row stores); anything else is refused, not stored."""
    if sum(leg.amount_cents for leg in legs) != 0:
        raise ValueError(f"an unbalanced movement: {legs!r}")
    if len(legs) != 2 or legs[0].amount_cents == 0 or legs[0].account_id == legs[1].account_id:
        raise ValueError(f"a movement is one amount between two accounts, not {legs!r}")
    taken, given = sorted(legs, key=lambda leg: leg.amount_cents)
    return taken, given
