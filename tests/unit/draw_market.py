"""A market of open blocks sold with grattage's draw, and an adversary that runs its sales.

Used by test_unsteerable_draw.py. Each round: the public's sales are logged, then what the
adversary plans (sales of its own with client seeds it picks, the targeted player's pending
request — now, later, or refused); then the round's beacon value is published and the round's
sales are drawn in log order, each with ``choose_block`` among the open blocks and
``draw_index`` in the chosen block. A block sold out is replaced by a fresh one of the same table.

The adversary sees the world only through its ``Knowledge``: the beacon value of the round it
plans (the witness's secret), the blocks' chain links (the operator's), the blocks' contents
(the operator's). What it does not know it replaces by its best guess: the latest published
beacon value, a guessed link, the table's average prize for every unit.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from grattage.blocks.draw import SparsePermutation, choose_block, draw_index

STAKE = 100
TABLE = ((5000, 1), (1000, 5), (400, 25), (100, 100))  # (prize cents, count) in 500 units
BLOCK_SIZE = 500
AVERAGE_PRIZE = sum(p * c for p, c in TABLE) / BLOCK_SIZE  # 60 cents: a 60 % return


def _h(*parts: object) -> bytes:
    return hashlib.sha256("|".join(map(str, parts)).encode()).digest()


@dataclass
class Block:
    block_id: bytes
    prizes: list[int]  # unit -> prize: the operator's secret until disclosure
    links: list[bytes]  # d_0 … d_N
    permutation: SparsePermutation
    sold: int = 0
    prize_left: int = 0

    @classmethod
    def fresh(cls, rng: random.Random, serial: int) -> Block:
        prizes = [p for p, c in TABLE for _ in range(c)]
        prizes += [0] * (BLOCK_SIZE - len(prizes))
        rng.shuffle(prizes)
        links = [rng.randbytes(32)]
        for _ in range(BLOCK_SIZE):
            links.append(hashlib.sha256(links[-1]).digest())
        links.reverse()
        block_id = _h("block", serial)[:16]
        return cls(block_id, prizes, links, SparsePermutation(BLOCK_SIZE), 0, sum(prizes))

    @property
    def left(self) -> int:
        return BLOCK_SIZE - self.sold


@dataclass(frozen=True)
class Knowledge:
    beacon: bool  # knows w_r before it is published (the witness's chain)
    chain: bool  # knows every d (the operator's chain)
    contents: bool  # knows each unit's prize (the operator's blocks)


OPERATOR = Knowledge(beacon=False, chain=True, contents=True)
WITNESS = Knowledge(beacon=True, chain=False, contents=False)
COLLUSION = Knowledge(beacon=True, chain=True, contents=True)


@dataclass(frozen=True)
class Sale:
    who: str  # "public", "target" or "own"
    ticket: int
    seed: int = 0

    def receipt_hash(self, round_: int) -> bytes:
        return _h("receipt", self.ticket, self.who, self.seed, round_)


@dataclass
class Market:
    seed: int
    open_blocks: int = 3
    rng: random.Random = field(init=False)
    blocks: list[Block] = field(init=False)
    serial: int = 0
    tickets: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.blocks = [self._fresh() for _ in range(self.open_blocks)]

    def _fresh(self) -> Block:
        self.serial += 1
        return Block.fresh(self.rng, self.serial)

    def beacon(self, round_: int) -> bytes:
        """w_r: published only once the round's sales are logged (the witness's secret)."""
        return _h("beacon", self.seed, round_)

    def sale(self, who: str, seed: int = 0) -> Sale:
        self.tickets += 1
        return Sale(who, self.tickets, seed)

    def draw(self, round_: int, sales: list[Sale]) -> list[tuple[int, float]]:
        """Publish w_r and draw the round's sales in log order: the prize of each, with the
        pool's average prize just before its draw (its expectation, for whoever knew the pool)."""
        w_r, prizes = self.beacon(round_), []
        for sale in sales:
            pool_average = self.pool_average(COLLUSION)
            h = sale.receipt_hash(round_)
            remaining = [(b.block_id, b.left) for b in self.blocks]
            chosen = choose_block(w_r, h, remaining)
            block = next(b for b in self.blocks if b.block_id == chosen)
            n = block.sold
            j = draw_index(w_r, block.links[n + 1], block.block_id, n, BLOCK_SIZE, h)
            unit = block.permutation.draw(n, j)
            block.sold += 1
            block.prize_left -= block.prizes[unit]
            prizes.append((block.prizes[unit], pool_average))
            if block.left == 0:
                self.blocks[self.blocks.index(block)] = self._fresh()
        return prizes

    def preview(self, round_: int, knows: Knowledge) -> Preview:
        """The adversary's model of this round's draws, by what it knows (it does not see a
        sold-out block's replacement: a rare misprediction, only ever in its favour to miss)."""
        w_r = self.beacon(round_) if knows.beacon else self.beacon(round_ - 1)
        return Preview(self, round_, knows, w_r, {b.block_id: b.sold for b in self.blocks})

    def pool_average(self, knows: Knowledge) -> float:
        """The expected prize of the next sale, as the adversary can compute it."""
        if not knows.contents:
            return AVERAGE_PRIZE
        return sum(b.prize_left for b in self.blocks) / sum(b.left for b in self.blocks)


@dataclass
class Preview:
    market: Market
    round_: int
    knows: Knowledge
    w_r: bytes
    sold: dict[bytes, int]
    overlay: dict[bytes, dict[int, int]] = field(default_factory=dict)
    last: float | None = None  # the predicted prize of the last sale added

    def copy(self) -> Preview:
        overlay = {block: dict(moved) for block, moved in self.overlay.items()}
        return Preview(self.market, self.round_, self.knows, self.w_r, dict(self.sold), overlay)

    def add(self, sale: Sale) -> Preview:
        by_id = {b.block_id: b for b in self.market.blocks}
        h = sale.receipt_hash(self.round_)
        left = [(b, BLOCK_SIZE - n) for b, n in self.sold.items() if n < BLOCK_SIZE]
        if not left:
            self.last = None
            return self
        chosen = choose_block(self.w_r, h, left)
        block, n = by_id[chosen], self.sold[chosen]
        overlay = self.overlay.setdefault(chosen, {})
        link = block.links[n + 1] if self.knows.chain else _h("guessed link", chosen, n)
        j = draw_index(self.w_r, link, chosen, n, BLOCK_SIZE, h)
        unit_n = overlay.get(n, block.permutation.unit_at(n))
        unit_j = overlay.get(j, block.permutation.unit_at(j))
        overlay[n], overlay[j] = unit_j, unit_n
        self.sold[chosen] = n + 1
        self.last = block.prizes[unit_j] if self.knows.contents else AVERAGE_PRIZE
        return self


@dataclass
class Outcome:
    target: list[int] = field(default_factory=list)
    public: list[int] = field(default_factory=list)
    own: list[int] = field(default_factory=list)
    target_pool: list[float] = field(default_factory=list)  # the pool's average at each
    refused: int = 0
    rounds: int = 0


def run(
    knows: Knowledge,
    purchases: int,
    *,
    seed: int = 1,
    steer: bool = True,
    public_per_round: int = 2,
    max_wait: int = 5,
    own_sales: int = 2,
    seeds_tried: int = 3,
    refuse: bool = True,
) -> Outcome:
    """Sell until the targeted player has made ``purchases`` purchases; ``steer=False`` is the
    honest operator (every request sold at once, nothing inserted); ``refuse=False`` sells a
    request that has waited ``max_wait`` rounds instead of refusing it."""
    market, outcome = Market(seed), Outcome()
    arrivals = random.Random(seed + 1)
    pending: list[int] = []  # the rounds the target's waiting requests arrived in
    round_ = 0
    while len(outcome.target) < purchases:
        round_ += 1
        if arrivals.random() < 0.5:
            pending.append(round_)
        logged = [market.sale("public") for _ in range(public_per_round)]
        plan: list[Sale] = []
        if pending and not steer:
            pending.pop(0)
            plan = [market.sale("target")]
        elif pending:
            plan = _steer(market, round_, logged, pending, knows, own_sales, seeds_tried)
            if not refuse and pending and round_ - pending[0] >= max_wait and not plan_sells(plan):
                pending.pop(0)
                plan = [market.sale("target")]
            outcome.refused += sum(1 for r in pending if round_ - r >= max_wait)
            pending[:] = [r for r in pending if round_ - r < max_wait]  # refused: never happened
        sales = logged + plan
        for sale, (prize, pool_average) in zip(sales, market.draw(round_, sales), strict=True):
            getattr(outcome, sale.who).append(prize)
            if sale.who == "target":
                outcome.target_pool.append(pool_average)
    outcome.rounds = round_
    return outcome


def plan_sells(plan: list[Sale]) -> bool:
    return any(sale.who == "target" for sale in plan)


def _steer(
    market: Market,
    round_: int,
    logged: list[Sale],
    pending: list[int],
    knows: Knowledge,
    own_sales: int,
    seeds_tried: int,
) -> list[Sale]:
    """The adversary's plan for the oldest waiting request: k sales of its own (the last one's
    client seed ground over ``seeds_tried`` values) then the target's sale, the k and seed it
    predicts worst for the target; knowing the contents, it makes the sale only if it predicts
    a loss and the pool's average prize is at most the table's; otherwise it burns the pool
    with sales of its own and waits (``run`` refuses the request, or sells it with
    ``refuse=False``, once the player stops waiting). Where its predictions rest on a guessed
    beacon value they are noise — unless the draw leaked, which is what the tests look for.
    """
    base = market.tickets
    after_public = market.preview(round_, knows)
    for sale in logged:
        after_public.add(sale)
    best: tuple[float, int, int] | None = None
    for k in range(own_sales + 1):
        for s in range(seeds_tried if k else 1):
            trial = after_public.copy()
            for i in range(k):
                trial.add(Sale("own", base + i + 1, s if i == k - 1 else 0))
            predicted = trial.add(Sale("target", base + k + 1)).last
            if predicted is not None and (best is None or predicted < best[0]):
                best = (predicted, k, s)
    if best is None:
        return []
    value, k, s = best
    # Knowing the contents, it sells only a predicted loss while the pool is poor; without
    # them it has nothing to rank by, and sells its best-ranked plan at once.
    good = not knows.contents or (value == 0 and market.pool_average(knows) <= AVERAGE_PRIZE)
    if good:
        pending.pop(0)
        own = [market.sale("own", s if i == k - 1 else 0) for i in range(k)]
        return [*own, market.sale("target")]
    return [market.sale("own", i) for i in range(own_sales)] if knows.contents else []
