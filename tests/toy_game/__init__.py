"""A third game, defined in the test folder alone, to prove that a game plugs into the platform
through :func:`grattage.games.register_game` without touching ``src/`` (docs/adding-a-game.md).

**Pile ou face**, 1 €. Before buying, the player calls ``pile`` or ``face``. The ticket has two
zones: ``amount`` (an amount of the table) and ``coin`` (the side the coin fell on), which may be
revealed only once ``amount`` is. **Win rule:** the coin shows the player's call → the ticket
wins the amount; otherwise it loses.

**Design policy:** a winning ticket shows the call and the prize; a losing one shows the other
side and an amount drawn uniformly among the table's, through the ``rng`` passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from grattage.errors import InvalidPrizeTable, InvalidTicket
from grattage.games import Game, PrizeTable, Randomness, TicketDocument
from grattage.games.base import require_game
from grattage.games.table import parse_prize_table

SIDES = ("pile", "face")
TABLE_FILE = Path(__file__).with_name("pile_ou_face.toml")


def toy_table() -> PrizeTable:
    return parse_prize_table(TABLE_FILE.read_text("utf-8"), TABLE_FILE.name)


class PileOuFace(Game):
    name = "pile_ou_face"
    title = "Pile ou face"
    price_cents = 100
    base_block_size = 20
    allows_block_multiples = True
    rules_version = "pile_ou_face/test/design-v1"
    regulation_date = date(2026, 1, 1)
    choices = SIDES
    zones = ("amount", "coin")

    def _prepare(self, table: PrizeTable) -> None:
        if any(tier.shows for tier in table.tiers) or table.amounts_cents:
            raise InvalidPrizeTable(
                "pile ou face shows a prize as one amount: no shows, no amounts"
            )
        self.amounts = tuple(tier.prize_cents for tier in table.tiers)

    def design(
        self, prize_cents: int, rng: Randomness, choice: str | None = None
    ) -> TicketDocument:
        call = self.check_choice(choice)
        other = SIDES[1 - SIDES.index(str(call))]
        if prize_cents == 0:
            coin, amount = other, self.amounts[rng.below(len(self.amounts))]
        else:
            coin, amount = call, self.tier_for(prize_cents).prize_cents
        return {
            "game": self.name,
            "call": call,
            "coin": coin,
            "amount_cents": amount,
            "prize_cents": prize_cents,
        }

    def evaluate(self, ticket: Mapping[str, Any]) -> int:
        require_game(ticket, self.name)
        call, coin, amount = ticket.get("call"), ticket.get("coin"), ticket.get("amount_cents")
        if call not in SIDES:
            raise InvalidTicket(f"call is 'pile' or 'face', got {call!r}")
        if coin not in SIDES:
            raise InvalidTicket(f"coin is 'pile' or 'face', got {coin!r}")
        if type(amount) is not int or amount not in self.amounts:
            raise InvalidTicket(f"amount_cents {amount!r} is not one of the table's amounts")
        return amount if coin == call else 0

    def validate(self, ticket: Mapping[str, Any]) -> None:
        self._check_stated_prize(ticket, self.evaluate(ticket))

    def zone_content(self, ticket: Mapping[str, Any], zone: str) -> Any:
        self.check_zone(zone)
        return ticket["amount_cents" if zone == "amount" else "coin"]

    def zone_prerequisites(self, zone: str) -> tuple[str, ...]:
        self.check_zone(zone)
        return ("amount",) if zone == "coin" else ()
