"""The sale of a drawn block (docs/draw.md, "The draw in the platform"): in the purchase's
one transaction, the stake is debited (by the caller), the sale takes the block's next index
n under the block row the sale locks, its receipt v2 — chained to the block's previous one and
naming the beacon round it will be drawn with — is signed and queued for the log, and the
ticket is stored ``covered``: sold, its unit not drawn yet. The drawer
(:mod:`grattage.service.drawing`) draws it once the round is published.

No sale is taken while the witness is not answering: its round could pass uncosigned, and a
sale is never drawn without the beacon (503 ``unavailable``, nothing debited). Nor while no
drawer holds the draw's lease: no one would draw it (:mod:`grattage.service.drawer_seen`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from grattage.blocks.beacon import BeaconChain
from grattage.blocks.draw_records import document_sha256, make_receipt_v2
from grattage.blocks.round_rule import round_by_rule
from grattage.errors import NotFound, Unavailable
from grattage.games import Game
from grattage.service import block_lifecycle
from grattage.service.audit_trail import record_block_changes
from grattage.service.context import LoadedBlock, Platform
from grattage.service.draw_port import QueuedDraw, WitnessPort
from grattage.service.model import Mode, Movement, NewTicket, Ticket, Unit
from grattage.service.ports import Repositories
from grattage.service.stakes import debit_stake
from grattage.service.transparency import log_time, pseudonym, queue_signed_receipt
from grattage.service.views import stored_document, stored_revealed

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
WITNESS_RETRY_AFTER_SECONDS = 2
"""A 503 for want of the witness asks the client to come back after this long: the health
check looks again about twice a period (HttpWitness.poll), a second or so."""


def witness_for_sale(platform: Platform) -> WitnessPort:
    """The witness, if it answered recently; else Unavailable (nothing is sold)."""
    witness = platform.witness
    if witness is None:
        raise Unavailable(
            "this block is drawn from the witness's beacon and no witness is configured "
            "(GRATTAGE_WITNESS_URL): no sale until one is",
            retry_after_seconds=WITNESS_RETRY_AFTER_SECONDS,
        )
    if not witness.healthy():
        raise Unavailable(
            "the witness that draws this game's tickets is not answering: no sale is taken "
            "until it does (nothing was debited); try again in a moment",
            retry_after_seconds=WITNESS_RETRY_AFTER_SECONDS,
        )
    return witness


def drawer_for_sale(platform: Platform, repos: Repositories, witness: WitnessPort) -> None:
    """Unavailable (nothing is sold) unless a drawer holds a live lease: a sale no drawer
    draws would stay covered, its stake taken, for as long as none runs."""
    if not platform.drawer_seen.running(witness.now_ms(), repos.draws.lease_expiry):
        raise Unavailable(
            "no drawer is drawing this game's tickets (none holds the draw's lease): no sale is "
            "taken until one does (nothing was debited); try again in a moment"
        )


def draw_running(platform: Platform) -> bool | None:
    """Whether a drawer holds a live lease (None: no witness, nothing is drawn), read at
    most once a second — what ``GET /api/health`` says."""
    witness = platform.witness
    if witness is None:
        return None

    def read_expiry() -> int:
        with platform.uow.read() as repos:
            return repos.draws.lease_expiry()

    return platform.drawer_seen.running(witness.now_ms(), read_expiry)


def drawn_offer(
    platform: Platform, repos: Repositories, game: str, now: datetime
) -> tuple[int, int] | None:
    """(block id, price) of the game's open block when it is drawn (None otherwise: the sale
    then goes the undrawn way, which finds out for itself). Read without a lock: a block's
    price never changes, and the blocks on sale together share one (docs/back-office.md)."""
    if platform.witness is None:
        return None
    seen = platform.open_blocks_seen.get(game)
    fresh = seen is not None and now - seen[0] <= block_lifecycle.OPEN_BLOCKS_SEEN_FOR
    ids = seen[1] if fresh and seen is not None else repos.blocks.open_block_ids(game)
    if not ids:
        return None
    try:
        loaded = platform.loaded_block(repos, ids[0])
    except (NotFound, *block_lifecycle.UNPLAYABLE_TABLE_ERRORS):
        return None
    # A block priced nothing is not on sale: the plain path takes its unit and refuses it
    # (NotOnSale) before any money moves; a drawn sale would debit first.
    if not loaded.drawn or loaded.block.price_cents <= 0:
        return None
    return loaded.id, loaded.block.price_cents


def sell_drawn(
    platform: Platform,
    repos: Repositories,
    player_id: int,
    account_id: int,
    offer: tuple[int, int],
    *,
    game: Game,
    mode: Mode,
    sign: str | None,
    client_seed: str | None,
    now: datetime,
    loaded_for_sale: Callable[[Unit], LoadedBlock],
) -> tuple[Ticket, dict[str, object]]:
    """A drawn game's sale, its block's row taken **last**: the witness, the stake checks, the
    debit and the ticket's own rows come first, at the open block's price, so that the row every
    sale of the game waits for is held only for the index, the receipt and the draw's place
    (PostgreSQL: the one open block's row is the game's one queue, and each statement under it
    a round trip every sale waits for). Should the unit come from a block of another price
    (the open block ended meanwhile), the whole sale rolls back: try again."""
    expected_block, price = offer
    witness = witness_for_sale(platform)
    drawer_for_sale(platform, repos, witness)
    stake_legs, balance_after = debit_stake(
        platform, repos, player_id, account_id, game.name, price, now
    )
    # Stored on the block expected, index not yet known: sell_covered places it.
    sold = covered_ticket(
        player_id, game, expected_block, mode, sign, price, balance_after + price, now
    )
    ticket_id = repos.tickets.add(sold)
    repos.ledger.record(Movement("stake", stake_legs, now, player_id, ticket_id))
    unit = block_lifecycle.take_unit(platform, repos, game.name, spread=player_id, now=now)
    loaded = loaded_for_sale(unit)
    if unit.price_cents != price or not loaded.drawn:
        raise Unavailable(f"{game.name}'s block on sale changed during this purchase: try again")
    if repos.blocks.state_changes:  # this sale exhausted its block, or opened the next one
        record_block_changes(repos, now, actor="system:sale")
    return sell_covered(
        platform,
        repos,
        witness,
        loaded,
        unit,
        (ticket_id, sold),
        player_id=player_id,
        client_seed=client_seed,
    )


def covered_ticket(
    player_id: int,
    game: Game,
    block_id: int,
    mode: Mode,
    sign: str | None,
    stake_cents: int,
    balance_before: int,
    now: datetime,
) -> NewTicket:
    """A drawn sale's ticket as stored before its draw: ``covered``, no unit, no prize yet."""
    return NewTicket(
        player_id=player_id,
        game=game.name,
        block_id=block_id,
        position=None,
        sequence=None,
        mode=mode,
        sign=sign,
        stake_cents=stake_cents,
        prize_cents=0,
        document=stored_document({}),
        revealed=stored_revealed(game, ()),
        state="covered",
        created_at=now,
        last_action_at=now,
        finished_at=None,
        finished_by=None,
        balance_before_cents=balance_before,
        balance_after_cents=balance_before - stake_cents,
    )


def moment_of_ms(epoch_ms: int) -> datetime:
    """A beacon-clock reading (milliseconds since the epoch) as the receipt's UTC instant."""
    return EPOCH + timedelta(milliseconds=epoch_ms)


def round_for_sale(
    chains: list[BeaconChain], now_ms: int, margin_ms: int, not_before_ms: int | None
) -> tuple[str, int, int]:
    """(chain id, round, its time) of the first round at least ``margin_ms`` (at most one
    period) after ``now_ms`` — the receipt's own `time` — or the block's previous receipt's
    round (``not_before_ms``, its time) if that one is later: a block's rounds never go back,
    so its draws come in index order. docs/draw.md states the rule a verifier checks."""
    found = round_by_rule(chains, now_ms, margin_ms, not_before_ms)
    if found is not None:
        chain, number = found
        return chain.chain_id, number, chain.round_time_ms(number)
    raise Unavailable(
        "the witness has not published a chain for the next rounds: no sale",
        retry_after_seconds=WITNESS_RETRY_AFTER_SECONDS,
    )


def sell_covered(
    platform: Platform,
    repos: Repositories,
    witness: WitnessPort,
    loaded: LoadedBlock,
    unit: Unit,
    stored: tuple[int, NewTicket],
    *,
    player_id: int,
    client_seed: str | None,
) -> tuple[Ticket, dict[str, object]]:
    """Sale ``unit.position`` (its index n) of the covered ticket ``stored`` (its id, and its
    facts as stored with its stake movement): its signed receipt v2 (queued in the log), its
    place in the draw queue, and the ticket given its block and index."""
    ticket_id, stored_ticket = stored
    sequence = unit.position
    assert loaded.public_id is not None and loaded.block.commitment_index is not None
    public_id, commitment_index = loaded.public_id, loaded.block.commitment_index
    previous, last_round_ms = unit.chain_tip.receipt_sha256, unit.chain_tip.round_ms
    if previous is None:  # a block created before its chain tip was kept: its commitment
        commitment = repos.blocks.commitment(loaded.id)
        assert commitment is not None
        previous = document_sha256(json.loads(commitment[0])).hex()
    # One clock reading, taken now that the block's row is held, gives both the receipt's
    # `time` and its round: a verifier checks the round from the receipt alone (and the
    # previous one). The purchase's `now` was read before the stake checks and the wait for
    # this row — on PostgreSQL under load, over a second earlier (the outsider's finding 8).
    sold_ms = witness.now_ms()
    chain_id, round_number, round_ms = round_for_sale(
        witness.chains(), sold_ms, platform.policy.draw_margin_ms, last_round_ms
    )
    # Queued only while the key it signed with is in force, held until the sale commits
    # (docs/fairness.md, "Key rotation"): signed again if a rotation committed meanwhile.
    previous_sha256 = bytes.fromhex(previous)
    receipt = queue_signed_receipt(
        platform,
        repos,
        stored_ticket.created_at,
        lambda signer: make_receipt_v2(
            signer,
            ticket_id=ticket_id,
            player=pseudonym(platform, player_id),
            block_id=public_id,
            sequence=sequence,
            client_seed=client_seed,
            stake_cents=unit.price_cents,
            time=log_time(moment_of_ms(sold_ms)),
            previous=previous_sha256,
            chain_id=chain_id,
            round_number=round_number,
            commitment_index=commitment_index,
        ),
        block_row=loaded.id,
        ticket_row=ticket_id,
    )
    receipt_sha256 = document_sha256(receipt).hex()
    repos.draws.queue(  # and the ticket placed, and the receipt the block's chain tip
        QueuedDraw(
            ticket_id=ticket_id,
            block_id=loaded.id,
            sequence=sequence,
            chain_id=chain_id,
            round=round_number,
            round_ms=round_ms,
            receipt_sha256=receipt_sha256,
            receipt_index=None,
        )
    )
    placed = dataclasses.replace(stored_ticket, block_id=unit.block_id, sequence=sequence)
    return placed.stored_as(ticket_id), receipt
