"""The try mode, « Essayer gratuitement » (docs/games.md): the real games with play money.

Anyone, with or without an account, opens a try session (an anonymous token in a cookie of its
own) holding a play balance (``try_balance_cents``, refilled once spent). A try ticket is dealt
from a try block: the game's table at its real size with exactly its counts, shuffled one sale
at a time (:mod:`grattage.blocks.try_deal`). Its table and price are those of the game's
block on sale, as the lobby shows them (the game's own table when none is), so its odds are
the real game's; its picture is the game's own ``design`` for the tier dealt, through the same
:func:`design_unit` a real block's unit goes through. A sold-out try block is followed by a new
one, and so is one whose table is no longer the one on sale.

This module writes only ``repos.try_play``, and reads nothing real but the table on sale
(``repos.blocks.showcase``, the lobby's read): no player, wallet, ledger or unit of a real block
is ever read or written here, so a try can neither win nor cost real money. Every change of
play money is one transaction, in a conditional statement that never takes it below zero.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from grattage.blocks.sealing import design_unit
from grattage.blocks.try_deal import deal, ordered_ends
from grattage.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    NoTrySession,
    TryBalanceSpent,
    TryLimitReached,
    ZoneNotRevealable,
)
from grattage.games import Game, find_game, game_names
from grattage.games.randomness import SystemRandomness
from grattage.service.block_lifecycle import UNPLAYABLE_TABLE_ERRORS, table_unplayable
from grattage.service.context import Platform
from grattage.service.model import FinishedBy, Mode
from grattage.service.ports import Repositories
from grattage.service.records import TicketView
from grattage.service.try_ports import NewTryTicket, TrySession, TryTicket
from grattage.service.views import locked_zones

HISTORY_SIZE = 20
"""The try history is small: the session's last tickets, no paging."""

MODES: tuple[Mode, ...] = ("play", "auto")
_RANDOMNESS = SystemRandomness()


@dataclass(frozen=True)
class TryAccount:
    """What the try page shows of its session."""

    balance_cents: int
    refill_cents: int
    """What a refill brings the balance to (the starting play money)."""
    can_refill: bool
    """Whether the balance can no longer pay the cheapest game's ticket."""
    tickets_bought: int
    tickets_most: int
    expires_at: datetime


@dataclass(frozen=True)
class TryGame:
    """A game as the try mode deals it: the table of its try blocks, whose odds these are."""

    name: str
    title: str
    price_cents: int
    block_size: int
    winning_tickets: int
    top_prize_cents: int
    reconstruction: bool


def token_digest(token: str) -> str:
    """Only a token's digest is stored: a copy of the table opens no one's try session."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class _OnSale:
    game: Game
    """Bound to the table the try blocks are dealt from."""
    price_cents: int
    title: str


def _on_sale(platform: Platform, repos: Repositories, name: str) -> _OnSale:
    """The game bound to the table of its block on sale, with that block's price and title
    (what the lobby shows); the game's own table when no block is on sale or its table cannot
    be played."""
    default = find_game(name)  # an unknown game is refused here, before anything is read
    block = repos.blocks.showcase(name)
    if block is not None:
        try:
            game: Game | None = platform.game_for_table(block.table_json)
        except UNPLAYABLE_TABLE_ERRORS:
            game = None
        if game is not None and table_unplayable(game.table, block.price_cents) is None:
            return _OnSale(game, block.price_cents, block.title)
    return _OnSale(default, default.table.price_cents, default.table.title)


def try_games(platform: Platform) -> list[TryGame]:
    """Every game with the figures of the table its try blocks are dealt from."""
    shown = []
    with platform.uow.read() as repos:
        for name in game_names():
            on_sale = _on_sale(platform, repos, name)
            table = on_sale.game.table
            shown.append(
                TryGame(
                    name=name,
                    title=on_sale.title,
                    price_cents=on_sale.price_cents,
                    block_size=table.block_size,
                    winning_tickets=table.prizes_count,
                    top_prize_cents=max((tier.prize_cents for tier in table.tiers), default=0),
                    reconstruction=table.reconstruction,
                )
            )
    return shown


def _cheapest_price(platform: Platform, repos: Repositories) -> int:
    return min(_on_sale(platform, repos, name).price_cents for name in game_names())


def _account(platform: Platform, repos: Repositories, session: TrySession) -> TryAccount:
    return TryAccount(
        balance_cents=session.balance_cents,
        refill_cents=platform.policy.try_balance_cents,
        can_refill=session.balance_cents < _cheapest_price(platform, repos),
        tickets_bought=session.tickets_bought,
        tickets_most=platform.policy.try_session_max_tickets,
        expires_at=session.expires_at,
    )


def start(platform: Platform) -> tuple[str, TryAccount]:
    """A new try session with the starting play money: (its token, its account)."""
    token = secrets.token_urlsafe(32)
    now = platform.clock.now()
    expires_at = now + timedelta(hours=platform.policy.try_session_hours)
    balance = platform.policy.try_balance_cents
    with platform.uow.write() as repos:
        session_id = repos.try_play.add_session(token_digest(token), balance, now, expires_at)
        repos.try_play.record(session_id, None, "start", balance, balance, now)
        session = TrySession(session_id, balance, 0, now, expires_at)
        return token, _account(platform, repos, session)


def _session(repos: Repositories, token: str, now: datetime, lock: bool = False) -> TrySession:
    session = repos.try_play.session(token_digest(token), now, lock=lock) if token else None
    if session is None:
        raise NoTrySession("no try session here, or it expired: start one (POST /api/try/sessions)")
    return session


def account(platform: Platform, token: str) -> TryAccount:
    with platform.uow.read() as repos:
        return _account(platform, repos, _session(repos, token, platform.clock.now()))


def refill(platform: Platform, token: str) -> TryAccount:
    """Bring a spent play balance back to the starting play money."""
    now = platform.clock.now()
    with platform.uow.write() as repos:
        session = _session(repos, token, now, lock=True)
        if session.balance_cents >= _cheapest_price(platform, repos):
            raise Conflict("the play balance can still pay a ticket: it is refilled once spent")
        amount = platform.policy.try_balance_cents - session.balance_cents
        balance = repos.try_play.credit(session.id, amount)
        repos.try_play.record(session.id, None, "refill", amount, balance, now)
        refilled = TrySession(
            session.id, balance, session.tickets_bought, session.created_at, session.expires_at
        )
        return _account(platform, repos, refilled)


def buy(
    platform: Platform, token: str, *, game_name: str, mode: str, sign: str | None = None
) -> TicketView:
    """Deal the next try ticket of ``game_name`` against the session's play money."""
    find_game(game_name).check_choice(sign)
    if mode not in MODES:
        raise InvalidInput(f"mode is 'play' or 'auto', got {mode!r}")
    now = platform.clock.now()
    with platform.uow.write() as repos:
        on_sale = _on_sale(platform, repos, game_name)
        game, table, stake = on_sale.game, on_sale.game.table, on_sale.price_cents
        session = _session(repos, token, now)
        balance = repos.try_play.debit(session.id, stake, platform.policy.try_session_max_tickets)
        if balance is None:
            if session.tickets_bought >= platform.policy.try_session_max_tickets:
                raise TryLimitReached(
                    f"this try session bought its {session.tickets_bought} tickets; "
                    "start a new one tomorrow, or create an account"
                )
            raise TryBalanceSpent(f"the play balance cannot pay a {stake}-cent ticket: refill it")
        block = repos.try_play.open_block(game.name, table.digest(), table.block_size, now)
        position = block.sold
        dealt = deal(
            position,
            ordered_ends(table.counts_by_tier()),
            lambda slot: repos.try_play.moved_tier(block.id, slot),
            _RANDOMNESS,
        )
        if dealt.moved_slot is not None:
            repos.try_play.move(block.id, dealt.moved_slot, dealt.moved_tier)
        repos.try_play.forget_slot(block.id, position)
        repos.try_play.take_position(block.id)
        prize = table.prize_of_tier(dealt.tier)
        document = design_unit(game, secrets.token_bytes(32), prize, sign)
        if game.evaluate(document) != prize:
            raise AssertionError(f"a try ticket of {game.name} shows another prize than {prize}")
        auto = mode == "auto"
        balance_before = balance + stake
        new = NewTryTicket(
            session_id=session.id,
            game=game.name,
            block_id=block.id,
            position=position,
            mode=mode,
            sign=sign,
            stake_cents=stake,
            prize_cents=prize,
            document=json.dumps(document, separators=(",", ":")),
            revealed=json.dumps(list(game.zones)) if auto else "[]",
            state="finished" if auto else "playing",
            created_at=now,
            finished_at=now if auto else None,
            finished_by="auto" if auto else None,
            balance_before_cents=balance_before,
            balance_after_cents=balance,
        )
        ticket_id = repos.try_play.add_ticket(new)
        repos.try_play.record(session.id, ticket_id, "stake", -stake, balance, now)
        if auto and prize:
            balance = repos.try_play.credit(session.id, prize)
            repos.try_play.record(session.id, ticket_id, "prize", prize, balance, now)
            repos.try_play.set_balance_after(ticket_id, balance)
        stored = repos.try_play.ticket(session.id, ticket_id)
    assert stored is not None
    return try_ticket_view(stored, game)


def reveal(
    platform: Platform,
    token: str,
    ticket_id: int,
    zones: list[str] | None = None,
    reveal_all: bool = False,
    by_inactivity: bool = False,
) -> TicketView:
    """Reveal zones of a try ticket, as the real ``reveal`` does; the prize, play money,
    is credited to the session once, by the transaction that finishes the ticket."""
    if not reveal_all and not zones:
        raise InvalidInput('say which zones to reveal ({"zones": [...]}) or {"all": true}')
    if by_inactivity and not reveal_all:
        raise InvalidInput('an inactivity reveal reveals every zone: {"all": true}')
    now = platform.clock.now()
    with platform.uow.write() as repos:
        session = _session(repos, token, now)
        ticket = _owned(repos, session.id, ticket_id, lock=True)
        game = find_game(ticket.game)
        requested = list(game.zones) if reveal_all else list(dict.fromkeys(zones or []))
        for zone in requested:
            game.check_zone(zone)
        if by_inactivity and not game.reveals_after_inactivity:
            raise InvalidInput(f"a {game.name} ticket is not revealed after inactivity")
        if ticket.state == "finished":
            return try_ticket_view(ticket, game)
        revealed = set(json.loads(ticket.revealed)) | set(requested)
        for zone in requested:
            missing = [z for z in game.zone_prerequisites(zone) if z not in revealed]
            if missing:
                raise ZoneNotRevealable(f"{zone!r} can be revealed only after {', '.join(missing)}")
        ordered = json.dumps([zone for zone in game.zones if zone in revealed])
        if len(revealed) == len(game.zones):
            finished_by: FinishedBy = "inactivity" if by_inactivity else "player"
            if repos.try_play.finish(ticket.id, ordered, finished_by, now) and ticket.prize_cents:
                balance = repos.try_play.credit(session.id, ticket.prize_cents)
                repos.try_play.record(
                    session.id, ticket.id, "prize", ticket.prize_cents, balance, now
                )
                repos.try_play.set_balance_after(ticket.id, balance)
        else:
            repos.try_play.set_revealed(ticket.id, ordered)
        updated = _owned(repos, session.id, ticket.id)
    return try_ticket_view(updated, game)


def _owned(repos: Repositories, session_id: int, ticket_id: int, lock: bool = False) -> TryTicket:
    ticket = repos.try_play.ticket(session_id, ticket_id, lock=lock)
    if ticket is None:
        raise NotFound(f"no try ticket {ticket_id!r} in this try session")
    return ticket


def get_ticket(platform: Platform, token: str, ticket_id: int) -> TicketView:
    with platform.uow.read() as repos:
        session = _session(repos, token, platform.clock.now())
        ticket = _owned(repos, session.id, ticket_id)
    return try_ticket_view(ticket, find_game(ticket.game))


def last_ticket(platform: Platform, token: str) -> TicketView:
    with platform.uow.read() as repos:
        session = _session(repos, token, platform.clock.now())
        ticket = repos.try_play.last_ticket(session.id)
    if ticket is None:
        raise NotFound("no try ticket yet")
    return try_ticket_view(ticket, find_game(ticket.game))


def history(platform: Platform, token: str) -> list[TryTicket]:
    """The session's last :data:`HISTORY_SIZE` try tickets, newest first."""
    with platform.uow.read() as repos:
        session = _session(repos, token, platform.clock.now())
        return repos.try_play.history(session.id, HISTORY_SIZE)


def purge(platform: Platform) -> int:
    """Delete the expired try sessions with their tickets and movements (the sweeper's)."""
    with platform.uow.write() as repos:
        return repos.try_play.purge(platform.clock.now())


def try_ticket_view(ticket: TryTicket, game: Game) -> TicketView:
    """The API's ``Ticket`` of a try ticket: hidden content never leaves the server."""
    finished = ticket.state == "finished"
    document = json.loads(ticket.document)
    revealed = set(json.loads(ticket.revealed))
    shown = game.zones if finished else [zone for zone in game.zones if zone in revealed]
    return TicketView(
        id=ticket.id,
        game=ticket.game,
        title=game.table.title,
        mode=ticket.mode,
        state=ticket.state,
        sign=ticket.sign,
        stake_cents=ticket.stake_cents,
        created_at=ticket.created_at,
        zones=tuple(game.zones),
        revealed={zone: game.zone_content(document, zone) for zone in shown},
        locked_zones=tuple(locked_zones(game, revealed, finished)),
        prize_cents=ticket.prize_cents if finished else None,
        document={**document, "ticket_id": ticket.id, "try": True} if finished else None,
        finished_at=ticket.finished_at,
        finished_by=ticket.finished_by,
        balance_after_cents=ticket.balance_after_cents,
    )
