"""The interface every game implements, so that blocks, the service and the pages never need
to know which game they hold.

A game is its rules bound to one prize table. It answers four questions:

* ``design(prize_cents, rng, choice)`` — a ticket document that shows that prize;
* ``evaluate(ticket)`` — what the visible content wins under the regulation's rule;
* ``validate(ticket)`` — raise :class:`~grattage.errors.InvalidTicket` naming the first broken rule;
* zones — which hidden areas a ticket has, what each hides, and in which order they may open.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Set
from datetime import date
from typing import Any, ClassVar, Generic, TypeVar

from grattage.errors import (
    InvalidChoice,
    InvalidPrizeTable,
    InvalidTicket,
    InvalidZone,
    PrizeNotOffered,
)
from grattage.games.money import format_euros
from grattage.games.randomness import Randomness
from grattage.games.table import PrizeTable, Tier

Way = TypeVar("Way")

TicketDocument = dict[str, Any]
"""The JSON ticket document of docs/games.md (``game``, the visible content, ``prize_cents``)."""


class Game(ABC):
    name: ClassVar[str]
    title: ClassVar[str]
    price_cents: ClassVar[int]
    base_block_size: ClassVar[int]
    allows_block_multiples: ClassVar[bool]
    rules_version: ClassVar[str]
    regulation_date: ClassVar[date]
    """The day the game's regulation was made (« Fait à Paris, le … »): the rules pages name it,
    the game's and not the table's: an operator's table changes the prizes, not the rules."""
    choices: ClassVar[tuple[str, ...]]
    """What a player picks before buying (Astro's signs); empty when nothing is picked."""
    zones: ClassVar[tuple[str, ...]]
    reveals_after_inactivity: ClassVar[bool] = False
    """Whether the regulation has the system reveal and finish a ticket left untouched for the
    inactivity delay (Cash, art. 4.3); any ticket is still finished after the abandon delay."""

    def __init__(self, table: PrizeTable) -> None:
        if table.game != self.name:
            raise PrizeNotOffered(f"table is for game {table.game!r}, not {self.name!r}")
        self.table = table
        self._prepare(table)

    # -- what each game provides -------------------------------------------------------------
    @abstractmethod
    def _prepare(self, table: PrizeTable) -> None:
        """Check that every tier can be dressed and precompute the ways to dress it."""

    @abstractmethod
    def design(
        self, prize_cents: int, rng: Randomness, choice: str | None = None
    ) -> TicketDocument: ...

    @abstractmethod
    def evaluate(self, ticket: Mapping[str, Any]) -> int: ...

    @abstractmethod
    def validate(self, ticket: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def zone_content(self, ticket: Mapping[str, Any], zone: str) -> Any:
        """What the hidden zone ``zone`` shows once revealed."""

    def zone_prerequisites(self, zone: str) -> tuple[str, ...]:
        """Zones that must be revealed before ``zone`` may be."""
        self.check_zone(zone)
        return ()

    # -- shared behaviour --------------------------------------------------------------------
    def with_table(self, table: PrizeTable) -> Game:
        """The same rules bound to another prize table (checked on the way)."""
        return type(self)(table)

    def check_choice(self, choice: str | None) -> str | None:
        if not self.choices:
            if choice is not None:
                raise InvalidChoice(f"{self.name} takes no choice, got {choice!r}")
            return None
        if choice not in self.choices:
            raise InvalidChoice(
                f"{self.name} needs one of {', '.join(self.choices)}; got {choice!r}"
            )
        return choice

    def check_zone(self, zone: str) -> None:
        if zone not in self._zone_set:
            raise InvalidZone(f"{self.name} tickets have no zone {zone!r}")

    @property
    def _zone_set(self) -> Set[str]:
        return frozenset(self.zones)

    def tier_for(self, prize_cents: int) -> Tier:
        tier = self.table.tier_for_prize(prize_cents)
        if tier is None:
            raise self._not_offered(prize_cents)
        return tier

    def _not_offered(self, prize_cents: int) -> PrizeNotOffered:
        return PrizeNotOffered(
            f"{self.name}'s table has no prize of {format_euros(prize_cents)} "
            f"({prize_cents!r} cents)"
        )

    def _check_stated_prize(self, ticket: Mapping[str, Any], won: int) -> None:
        """The document's ``prize_cents`` must be what the rule gives, and a prize of the table."""
        stated = ticket.get("prize_cents")
        if not _is_int(stated):
            raise InvalidTicket(f"prize_cents must be an integer, got {stated!r}")
        if stated != won:
            raise InvalidTicket(
                f"prize_cents is {stated!r} but the win rule gives {won!r} from what is shown"
            )
        if won and self.table.tier_for_prize(won) is None:
            raise InvalidTicket(f"the ticket shows a prize of {won!r} cents, not in the table")


class ShownInWays(Game, Generic[Way]):
    """A game whose ticket can show one prize in several ways (Cash: sums of amounts; Astro:
    gain × multiplier), all found for each tier when the table is bound, one drawn per ticket.

    ``_prepare`` calls :meth:`_keep_ways` for every tier; ``design`` draws with :meth:`_draw_way`.
    """

    def __init__(self, table: PrizeTable) -> None:
        self._ways: dict[int, list[Way]] = {}
        super().__init__(table)

    def _keep_ways(self, tier: Tier, ways: list[Way], none_found: str) -> None:
        """Keep the ways to show ``tier``'s prize; InvalidPrizeTable (``none_found``) if none."""
        if not ways:
            raise InvalidPrizeTable(f"row {tier.index}: {none_found}")
        self._ways[tier.prize_cents] = ways

    def ways_to_show(self, prize_cents: int) -> list[Way]:
        """The ways :meth:`design` may use to show ``prize_cents`` (the policy: see the game)."""
        if prize_cents not in self._ways:
            raise self._not_offered(prize_cents)
        return list(self._ways[prize_cents])

    def _draw_way(self, prize_cents: int, rng: Randomness) -> Way:
        """One of the ways to show ``prize_cents``, drawn with one ``rng.below``."""
        ways = self._ways.get(prize_cents)
        if ways is None:
            raise self._not_offered(prize_cents)
        return ways[rng.below(len(ways))]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def require_game(ticket: Mapping[str, Any], name: str) -> None:
    if not isinstance(ticket, Mapping):
        raise InvalidTicket(f"a ticket document is a JSON object, got {ticket!r}")
    if ticket.get("game") != name:
        raise InvalidTicket(f"not a {name} ticket: game is {ticket.get('game')!r}")
