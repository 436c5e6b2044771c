"""Selling, revealing and finishing tickets, and the sweeper that finishes abandoned ones.

A purchase is one transaction: debit the stake (never below zero), take the next unsold unit
of an open block, unseal that unit's tier, design its ticket from the block key and the
position, store it. An ``auto`` ticket is stored finished with its prize credited in the same
transaction. Finishing is a conditional ``playing → finished`` update: only the transaction
that wins it credits the prize, so a prize is credited exactly once.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import cast

from grattage.blocks.sealing import design_unit, unit_salt, unseal_tiers
from grattage.errors import (
    IdempotencyConflict,
    InsufficientBalance,
    InvalidInput,
    NotFound,
    ZoneNotRevealable,
)
from grattage.games import Game, find_game, game_names
from grattage.games.money import format_euros
from grattage.games.registry import game_type
from grattage.service import block_lifecycle
from grattage.service.audit_trail import record_block_changes
from grattage.service.context import Platform
from grattage.service.model import (
    HOUSE_PRIZES,
    HOUSE_STAKES,
    FinishedBy,
    Leg,
    Mode,
    Movement,
    NewTicket,
    Overdue,
    Ticket,
)
from grattage.service.ports import Repositories
from grattage.service.records import HistoryRow, TicketView
from grattage.service.views import history_row, revealed_zones, ticket_view

MODES: tuple[Mode, ...] = ("play", "auto")
MAX_IDEMPOTENCY_KEY = 255


class DesignMismatchError(AssertionError):
    """A designed ticket does not show its unit's prize: a bug, never a client's fault."""


def _request_hash(game: str, mode: str, sign: str | None) -> str:
    canonical = json.dumps({"game": game, "mode": mode, "sign": sign}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _check_purchase(game_name: str, mode: str, sign: str | None, key: str | None) -> Game:
    game = find_game(game_name)
    if mode not in MODES:
        raise InvalidInput(f"mode is 'play' or 'auto', got {mode!r}")
    game.check_choice(sign)
    if key is not None and not (0 < len(key) <= MAX_IDEMPOTENCY_KEY and key.isprintable()):
        raise InvalidInput(
            f"an Idempotency-Key has 1 to {MAX_IDEMPOTENCY_KEY} printable characters"
        )
    return game


def buy(
    platform: Platform,
    player_id: int,
    *,
    game_name: str,
    mode: str,
    sign: str | None = None,
    idempotency_key: str | None = None,
) -> tuple[TicketView, bool]:
    """Sell the next ticket of ``game_name``: (the ticket, whether this was a replay)."""
    game = _check_purchase(game_name, mode, sign, idempotency_key)
    request_hash = _request_hash(game.name, mode, sign)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        _finish_due(platform, repos, now, player_id)
        replayed = idempotency_key is not None and not repos.idempotency.add(
            player_id, idempotency_key, request_hash, now
        )
        if replayed:
            assert idempotency_key is not None
            ticket = _replay(repos, player_id, idempotency_key, request_hash)
        else:
            ticket = _sell(
                platform, repos, player_id, game=game, mode=cast(Mode, mode), sign=sign, now=now
            )
            if idempotency_key is not None:
                repos.idempotency.set_ticket(player_id, idempotency_key, ticket.id)
        sold_by = platform.loaded_block(repos, ticket.block_id).game
    # Shaping the answer needs no lock: done after the commit, outside the writers' queue.
    return ticket_view(ticket, sold_by), replayed


def _replay(repos: Repositories, player_id: int, key: str, request_hash: str) -> Ticket:
    claimed = repos.idempotency.get(player_id, key)
    assert claimed is not None
    claimed_hash, ticket_id = claimed
    if claimed_hash != request_hash or ticket_id is None:
        raise IdempotencyConflict(
            f"the Idempotency-Key {key!r} was already used for a different purchase"
        )
    ticket = repos.tickets.get(ticket_id)
    assert ticket is not None
    return ticket


def _sell(
    platform: Platform,
    repos: Repositories,
    player_id: int,
    *,
    game: Game,
    mode: Mode,
    sign: str | None,
    now: datetime,
) -> Ticket:
    stake = game.price_cents
    account_id = repos.ledger.player_account_id(player_id)
    if platform.stake_checks:
        # A check reads what the player already staked: hold the wallet first, or concurrent
        # purchases all read the same total and together exceed a limit (PostgreSQL).
        repos.ledger.lock_player_account(account_id)
    for check in platform.stake_checks:
        check(repos, player_id, game.name, stake, now)
    stake_legs = [Leg(account_id, -stake), Leg(repos.ledger.house_account(HOUSE_STAKES), stake)]
    try:
        balance_after = repos.ledger.apply(stake_legs)[account_id]
    except InsufficientBalance:
        raise InsufficientBalance(
            f"a {game.name} ticket costs {format_euros(stake)}; the balance cannot pay it"
        ) from None
    balance_before = balance_after + stake
    unit = block_lifecycle.take_unit(platform, repos, game.name, spread=player_id, now=now)
    if repos.blocks.state_changes:  # this sale exhausted a block, or opened the next one
        record_block_changes(repos, now, actor="system:sale")
    loaded = platform.loaded_block(repos, unit.block_id)
    sealed = repos.blocks.sealed_tier(loaded.block, unit.position)
    tier = unseal_tiers(loaded.key, sealed, unit.position)[0]
    prize = loaded.game.table.prize_of_tier(tier)
    document = design_unit(loaded.game, unit_salt(loaded.key, unit.position), prize, sign)
    if loaded.game.evaluate(document) != prize:
        raise DesignMismatchError(f"block {unit.block_id} unit {unit.position}: design != prize")
    auto = mode == "auto"
    prize_legs = [Leg(account_id, prize), Leg(repos.ledger.house_account(HOUSE_PRIZES), -prize)]
    if auto and prize:
        balance_after = repos.ledger.apply(prize_legs)[account_id]
    sold = NewTicket(
        player_id=player_id,
        game=game.name,
        block_id=unit.block_id,
        position=unit.position,
        mode=mode,
        sign=sign,
        stake_cents=stake,
        prize_cents=prize,
        document=json.dumps(document, separators=(",", ":")),
        revealed=json.dumps(list(loaded.game.zones)) if auto else "[]",
        state="finished" if auto else "playing",
        created_at=now,
        last_action_at=now,
        finished_at=now if auto else None,
        finished_by="auto" if auto else None,
        balance_before_cents=balance_before,
        balance_after_cents=balance_after,
    )
    ticket_id = repos.tickets.add(sold)
    repos.ledger.record(Movement("stake", stake_legs, now, player_id, ticket_id))
    if auto and prize:
        repos.ledger.record(Movement("prize", prize_legs, now, player_id, ticket_id))
    return sold.stored_as(ticket_id)


def _view(platform: Platform, repos: Repositories, ticket: Ticket) -> TicketView:
    return ticket_view(ticket, platform.loaded_block(repos, ticket.block_id).game)


def _owned(repos: Repositories, player_id: int, ticket_id: int, lock: bool = False) -> Ticket:
    ticket = repos.tickets.get(ticket_id, for_update=lock)
    if ticket is None or ticket.player_id != player_id:
        # Someone else's ticket is indistinguishable from a missing one.
        raise NotFound(f"no ticket {ticket_id!r}")
    return ticket


def _finish(
    platform: Platform,
    repos: Repositories,
    ticket: Ticket,
    finished_by: FinishedBy,
    now: datetime,
) -> bool:
    """Finish a playing ticket and credit its prize; False if it was already finished."""
    game = platform.loaded_block(repos, ticket.block_id).game
    if not repos.tickets.finish(ticket.id, json.dumps(list(game.zones)), now, finished_by):
        return False
    if ticket.prize_cents:
        account_id = repos.ledger.player_account_id(ticket.player_id)
        house = repos.ledger.house_account(HOUSE_PRIZES)
        legs = [Leg(account_id, ticket.prize_cents), Leg(house, -ticket.prize_cents)]
        balances = repos.ledger.post(Movement("prize", legs, now, ticket.player_id, ticket.id))
        repos.tickets.set_balance_after(ticket.id, balances[account_id])
    return True


def reveal(
    platform: Platform,
    player_id: int,
    ticket_id: int,
    zones: list[str] | None = None,
    reveal_all: bool = False,
) -> TicketView:
    """Reveal ``zones`` (or every zone); the ticket finishes when nothing is hidden any more."""
    if not reveal_all and not zones:
        raise InvalidInput('say which zones to reveal ({"zones": [...]}) or {"all": true}')
    now = platform.clock.now()
    with platform.uow.write() as repos:
        _finish_due(platform, repos, now, player_id)
        ticket = _owned(repos, player_id, ticket_id, lock=True)
        game = platform.loaded_block(repos, ticket.block_id).game
        requested = list(game.zones) if reveal_all else list(dict.fromkeys(zones or []))
        for zone in requested:
            game.check_zone(zone)
        if ticket.state == "finished":
            return ticket_view(ticket, game)
        revealed = set(revealed_zones(ticket)) | set(requested)
        for zone in requested:
            missing = [z for z in game.zone_prerequisites(zone) if z not in revealed]
            if missing:
                raise ZoneNotRevealable(f"{zone!r} can be revealed only after {', '.join(missing)}")
        ordered = [zone for zone in game.zones if zone in revealed]
        if len(ordered) == len(game.zones):
            _finish(platform, repos, ticket, "player", now)
        else:
            repos.tickets.set_revealed(ticket.id, json.dumps(ordered), now)
        updated = repos.tickets.get(ticket.id)
        assert updated is not None
        return ticket_view(updated, game)


def _overdue(platform: Platform, now: datetime) -> Overdue:
    policy = platform.policy
    return Overdue(
        inactivity_cutoff=now - timedelta(seconds=policy.inactivity_seconds),
        abandon_cutoff=now - timedelta(seconds=policy.abandon_seconds),
        inactivity_games=_revealing_games(),
    )


def _revealing_games() -> tuple[str, ...]:
    """The games whose rules reveal an idle ticket after the inactivity delay (Cash, 4.3)."""
    return tuple(name for name in game_names() if game_type(name).reveals_after_inactivity)


def _reason(ticket: Ticket) -> FinishedBy:
    return "inactivity" if game_type(ticket.game).reveals_after_inactivity else "abandon"


def _finish_due(
    platform: Platform, repos: Repositories, now: datetime, player_id: int | None = None
) -> int:
    due = repos.tickets.due(_overdue(platform, now), player_id)
    # Lock every ticket before any account: the same order as a reveal and the sweeper
    # (ticket, then account), so that they cannot deadlock on PostgreSQL.
    locked = [repos.tickets.get(ticket_id, for_update=True) for ticket_id in due]
    finished = 0
    for ticket in locked:
        if ticket is not None and ticket.state == "playing":
            finished += _finish(platform, repos, ticket, _reason(ticket), now)
    return finished


def settle_due(platform: Platform, player_id: int) -> int:
    """Lazily finish the player's own overdue tickets (called on every access)."""
    now = platform.clock.now()
    with platform.uow.read() as repos:
        due = repos.tickets.due(_overdue(platform, now), player_id)
    if not due:
        return 0
    with platform.uow.write() as repos:
        return _finish_due(platform, repos, now, player_id)


def sweep(platform: Platform, batch: int = 200) -> int:
    """Finish every overdue ticket of every player; how many were finished."""
    total = 0
    while True:
        now = platform.clock.now()
        with platform.uow.read() as repos:
            due = repos.tickets.due(_overdue(platform, now), limit=batch)
        if not due:
            return total
        for ticket_id in due:
            with platform.uow.write() as repos:
                ticket = repos.tickets.get(ticket_id, for_update=True)
                if ticket is not None and ticket.state == "playing":
                    total += _finish(platform, repos, ticket, _reason(ticket), now)
        if len(due) < batch:
            return total


def get_ticket(platform: Platform, player_id: int, ticket_id: int) -> TicketView:
    settle_due(platform, player_id)
    with platform.uow.read() as repos:
        return _view(platform, repos, _owned(repos, player_id, ticket_id))


def last_ticket(platform: Platform, player_id: int) -> TicketView:
    settle_due(platform, player_id)
    with platform.uow.read() as repos:
        ticket = repos.tickets.last(player_id)
        if ticket is None:
            raise NotFound("no ticket yet")
        return _view(platform, repos, ticket)


def history(
    platform: Platform, player_id: int, limit: int = 20, before: int | None = None
) -> tuple[list[HistoryRow], int | None]:
    """A page of the player's tickets, newest first, and the ``before`` of the next page."""
    if not 1 <= limit <= 100:
        raise InvalidInput(f"limit is 1 to 100, got {limit!r}")
    settle_due(platform, player_id)
    with platform.uow.read() as repos:
        found = repos.tickets.history(player_id, limit + 1, before)
    page = found[:limit]
    following = page[-1].id if len(found) > limit else None
    return [history_row(ticket) for ticket in page], following
