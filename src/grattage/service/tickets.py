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
from dataclasses import replace
from datetime import datetime
from typing import Any, cast

from grattage.blocks.draw_records import check_client_seed
from grattage.blocks.sealing import design_unit, unit_salt, unseal_tiers
from grattage.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotDrawn,
    NotFound,
    NotOnSale,
    ZoneNotRevealable,
)
from grattage.games import Game, find_game
from grattage.service import block_lifecycle, draw_sale, prizes_left
from grattage.service.audit_trail import record_block_changes
from grattage.service.context import LoadedBlock, Platform
from grattage.service.finishing import finish as _finish
from grattage.service.finishing import finish_due as _finish_due
from grattage.service.finishing import settle_due, sweep
from grattage.service.model import (
    HOUSE_PRIZES,
    Leg,
    Mode,
    Movement,
    NewTicket,
    Ticket,
    Unit,
)
from grattage.service.ports import Repositories
from grattage.service.records import HistoryRow, TicketView
from grattage.service.stakes import debit_stake
from grattage.service.transparency import receipt_of, sign_and_log_receipt
from grattage.service.views import (
    history_row,
    revealed_zones,
    stored_document,
    stored_revealed,
    ticket_view,
)

__all__ = ["buy", "get_ticket", "history", "last_ticket", "reveal", "settle_due", "sweep"]

MODES: tuple[Mode, ...] = ("play", "auto")
MAX_IDEMPOTENCY_KEY = 255


class DesignMismatchError(AssertionError):
    """A designed ticket does not show its unit's prize: a bug, never a client's fault."""


def _request_hash(game: str, mode: str, sign: str | None, client_seed: str | None) -> str:
    asked: dict[str, str | None] = {"game": game, "mode": mode, "sign": sign}
    if client_seed is not None:  # absent when none: a key's stored hash stays valid
        asked["client_seed"] = client_seed
    canonical = json.dumps(asked, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _check_purchase(
    game_name: str, mode: str, sign: str | None, key: str | None, client_seed: str | None
) -> Game:
    game = find_game(game_name)
    if mode not in MODES:
        raise InvalidInput(f"mode is 'play' or 'auto', got {mode!r}")
    game.check_choice(sign)
    try:
        check_client_seed(client_seed)
    except ValueError as error:
        raise InvalidInput(str(error)) from None
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
    client_seed: str | None = None,
) -> tuple[TicketView, bool]:
    """Sell the next ticket of ``game_name``: (the ticket, whether this was a replay). A
    drawn block's ticket comes back ``covered``: its unit is drawn once its round is out."""
    game = _check_purchase(game_name, mode, sign, idempotency_key, client_seed)
    request_hash = _request_hash(game.name, mode, sign, client_seed)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        _finish_due(platform, repos, now, player_id)
        replayed = idempotency_key is not None and not repos.idempotency.add(
            player_id, idempotency_key, request_hash, now
        )
        if replayed:
            assert idempotency_key is not None
            ticket = _replay(repos, player_id, idempotency_key, request_hash)
            receipt = receipt_of(repos, ticket.id)
        else:
            ticket, receipt = _sell(
                platform,
                repos,
                player_id,
                game=game,
                mode=cast(Mode, mode),
                sign=sign,
                client_seed=client_seed,
                now=now,
            )
            if idempotency_key is not None:
                repos.idempotency.set_ticket(player_id, idempotency_key, ticket.id)
        sold_by = platform.loaded_block(repos, ticket.block_id).game
    # Shaping the answer needs no lock: done after the commit, outside the writers' queue.
    return replace(ticket_view(ticket, sold_by), receipt=receipt), replayed


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
    client_seed: str | None,
    now: datetime,
) -> tuple[Ticket, dict[str, Any] | None]:
    account_id = repos.ledger.player_account_id(player_id)
    if (offer := draw_sale.drawn_offer(platform, repos, game.name, now)) is not None:
        return draw_sale.sell_drawn(
            platform,
            repos,
            player_id,
            account_id,
            offer,
            game=game,
            mode=mode,
            sign=sign,
            client_seed=client_seed,
            now=now,
            loaded_for_sale=lambda unit: _loaded_for_sale(platform, repos, unit),
        )
    # The stake is the price of the block the unit comes from, so the unit is taken first
    # (its price comes back with it); a refusal below rolls the take back with the rest.
    # Taken before the wallet is held: a purchase waiting on its game's block row (held by
    # a hung transaction) must hold nothing the same player's purchase of another game needs.
    unit = block_lifecycle.take_unit(platform, repos, game.name, spread=player_id, now=now)
    loaded = _loaded_for_sale(platform, repos, unit)
    # A drawn block sells only while the witness answers and a drawer draws: refused here,
    # nothing is debited.
    witness = draw_sale.witness_for_sale(platform) if loaded.drawn else None
    if witness is not None:
        draw_sale.drawer_for_sale(platform, repos, witness)
    stake = unit.price_cents
    stake_legs, balance_after = debit_stake(
        platform, repos, player_id, account_id, game.name, stake, now
    )
    balance_before = balance_after + stake
    if witness is not None:
        sold = draw_sale.covered_ticket(
            player_id, game, unit.block_id, mode, sign, stake, balance_before, now
        )
        ticket_id = repos.tickets.add(sold)
        repos.ledger.record(Movement("stake", stake_legs, now, player_id, ticket_id))
        covered = draw_sale.sell_covered(
            platform,
            repos,
            witness,
            loaded,
            unit,
            (ticket_id, sold),
            player_id=player_id,
            client_seed=client_seed,
        )
        # As below, after its receipt (and its place in the draw queue: a drawn block's end
        # is logged by the drawer once its last sale is drawn).
        if repos.blocks.state_changes:
            record_block_changes(repos, now, actor="system:sale")
        return covered
    sealed = repos.blocks.sealed_tier(loaded.block, unit.position)
    tier = unseal_tiers(loaded.key, sealed, unit.position)[0]
    prize = loaded.game.table.prize_of_tier(tier)
    document = design_unit(loaded.game, unit_salt(loaded.key, unit.position), prize, sign)
    if loaded.game.evaluate(document) != prize:
        raise DesignMismatchError(f"block {unit.block_id} unit {unit.position}: design != prize")
    closed = bool(prize) and prizes_left.count_sale(
        platform, repos, unit.block_id, loaded.game.table, prize
    )
    auto = mode == "auto"
    prize_legs = [Leg(account_id, prize), Leg(repos.ledger.house_account(HOUSE_PRIZES), -prize)]
    if auto and prize:
        balance_after = repos.ledger.apply(prize_legs)[account_id]
    sold = NewTicket(
        player_id=player_id,
        game=game.name,
        block_id=unit.block_id,
        position=unit.position,
        sequence=unit.position,
        mode=mode,
        sign=sign,
        stake_cents=stake,
        prize_cents=prize,
        document=stored_document(document),
        revealed=stored_revealed(loaded.game, loaded.game.zones if auto else ()),
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
    receipt = sign_and_log_receipt(
        platform, repos, loaded, ticket_id, player_id, unit.position, stake, now
    )
    # The block changes of this sale — its last unit exhausted the block and opened the next,
    # or its top prize closed it — are logged after its receipt: a block ends after its last
    # sale (the monitor counts the receipts before a block.ended).
    if repos.blocks.state_changes:
        reason = prizes_left.TOP_PRIZE_SOLD_OUT if closed else None
        record_block_changes(repos, now, actor="system:sale", reason=reason)
    return sold.stored_as(ticket_id), receipt


_UNCHECKED = "unchecked"
_TABLE_UNPLAYABLE: dict[Game, str | None] = {}
"""Why each game bound to a stored table (see :func:`block_lifecycle.table_unplayable`) cannot
be sold; None when it can. Keyed by the game object (identity): the platform keeps one per
stored table for good, so this holds one entry per table, as that cache does."""


def _loaded_for_sale(platform: Platform, repos: Repositories, unit: Unit) -> LoadedBlock:
    """The unit's block, bound to its game: NotOnSale (the sale rolls back) if its stored table
    cannot be played, as the lobby says of it."""
    try:
        loaded = platform.loaded_block(repos, unit.block_id)
    except block_lifecycle.UNPLAYABLE_TABLE_ERRORS:
        raise _not_on_sale(unit, "its prize table cannot be played") from None
    if unit.price_cents <= 0:
        raise _not_on_sale(unit, f"its price is {unit.price_cents!r} cents")
    # Summing a table's rows on every sale would cost more than the rest of this check: a
    # game bound to a table never changes, so the answer is kept with it.
    why = _TABLE_UNPLAYABLE.get(loaded.game, _UNCHECKED)
    if why is _UNCHECKED:
        why = _TABLE_UNPLAYABLE[loaded.game] = block_lifecycle.table_unplayable(
            loaded.game.table, unit.price_cents
        )
    if why is not None:
        raise _not_on_sale(unit, why)
    return loaded


def _not_on_sale(unit: Unit, why: str) -> NotOnSale:
    return NotOnSale(f"block {unit.block_id} is not on sale: {why}; the operator must close it")


def _view(platform: Platform, repos: Repositories, ticket: Ticket) -> TicketView:
    """A ticket resumed or replayed, with its receipt (the game page's proof panel shows it)."""
    view = ticket_view(ticket, platform.loaded_block(repos, ticket.block_id).game)
    return replace(view, receipt=receipt_of(repos, ticket.id))


def _owned(repos: Repositories, player_id: int, ticket_id: int, lock: bool = False) -> Ticket:
    ticket = repos.tickets.get(ticket_id, for_update=lock)
    if ticket is None or ticket.player_id != player_id:
        # Someone else's ticket is indistinguishable from a missing one.
        raise NotFound(f"no ticket {ticket_id!r}")
    return ticket


def reveal(
    platform: Platform,
    player_id: int,
    ticket_id: int,
    zones: list[str] | None = None,
    reveal_all: bool = False,
    by_inactivity: bool = False,
) -> TicketView:
    """Reveal ``zones`` (or every zone); the ticket finishes when nothing is hidden any more.
    ``by_inactivity``: the page's own inactivity timer reveals the rest (``reveal_all``), and
    the ticket is finished by ``inactivity``, as the server's would be."""
    if not reveal_all and not zones:
        raise InvalidInput('say which zones to reveal ({"zones": [...]}) or {"all": true}')
    if by_inactivity and not reveal_all:
        raise InvalidInput('an inactivity reveal reveals every zone: {"all": true}')
    now = platform.clock.now()
    with platform.uow.write() as repos:
        _finish_due(platform, repos, now, player_id)
        ticket = _owned(repos, player_id, ticket_id, lock=True)
        game = platform.loaded_block(repos, ticket.block_id).game
        requested = list(game.zones) if reveal_all else list(dict.fromkeys(zones or []))
        for zone in requested:
            game.check_zone(zone)
        if by_inactivity and not game.reveals_after_inactivity:
            raise InvalidInput(f"a {game.name} ticket is not revealed after inactivity")
        if ticket.state == "finished":
            return ticket_view(ticket, game)
        if ticket.state == "covered":
            raise NotDrawn(
                f"ticket {ticket_id!r} is not drawn yet: its unit is drawn once its beacon round "
                "is published (within a round); wait for it (GET /api/tickets/{id}?wait=1)"
            )
        revealed = set(revealed_zones(ticket, game)) | set(requested)
        for zone in requested:
            missing = [z for z in game.zone_prerequisites(zone) if z not in revealed]
            if missing:
                raise ZoneNotRevealable(f"{zone!r} can be revealed only after {', '.join(missing)}")
        ordered = [zone for zone in game.zones if zone in revealed]
        if len(ordered) == len(game.zones):
            # The page's word for why: it only labels the finish (the prize is the ticket's).
            _finish(platform, repos, ticket, "inactivity" if by_inactivity else "player", now)
        else:
            repos.tickets.set_revealed(ticket.id, stored_revealed(game, ordered), now)
        updated = repos.tickets.get(ticket.id)
        assert updated is not None
        return ticket_view(updated, game)


def get_ticket(platform: Platform, player_id: int, ticket_id: int) -> TicketView:
    settle_due(platform, player_id)
    with platform.uow.read() as repos:
        return _view(platform, repos, _owned(repos, player_id, ticket_id))


def still_covered(platform: Platform, player_id: int, ticket_id: int) -> bool:
    """Whether the player's ticket still waits for its draw: one read, nothing settled (a
    covered ticket is never overdue) — the long poll's look between two full answers."""
    with platform.uow.read() as repos:
        return repos.tickets.still_covered(ticket_id, player_id)


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
