"""The designs of docs/games.md ("The draws to the byte") and the randomness stream of
docs/fairness.md, replayed as an outsider would from the docs alone — standard library only.
Used by :mod:`outsider_verifier`."""

from __future__ import annotations

import hashlib
from typing import Any


# -- the randomness stream (fairness.md, "The randomness stream") -------------------------------
class Stream:
    def __init__(self, seed: bytes) -> None:
        self.prefix = b"grattage/rng/v1" + len(seed).to_bytes(4, "big") + seed
        self.chunk, self.words = 0, []  # type: int, list[int]

    def word(self) -> int:
        if not self.words:
            data = hashlib.shake_256(self.prefix + self.chunk.to_bytes(4, "big")).digest(512)
            self.words = [int.from_bytes(data[i : i + 4], "big") for i in range(0, 512, 4)]
            self.words.reverse()
            self.chunk += 1
        return self.words.pop()

    def below(self, n: int) -> int:
        limit = 2**32 - 2**32 % n
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def uniform_below(self, n: int) -> int:
        if n <= 2**32:
            return self.below(n)
        k = -(-(n - 1).bit_length() // 32)
        space = 2 ** (32 * k)
        while True:
            x = 0
            for _ in range(k):
                x = x * 2**32 + self.below(2**32)
            if x < space - space % n:
                return x % n

    def weighted(self, weights: list[int]) -> int:
        x = self.uniform_below(sum(weights))
        running = 0
        for i, w in enumerate(weights):
            running += w
            if x < running:
                return i
        raise AssertionError("unreachable")


def gcd_all(values: list[int]) -> int:
    g = 0
    for v in values:
        a, b = g, v
        while b:
            a, b = b, a % b
        g = a
    return g


def lcm_all(values: list[int]) -> int:
    m = 1
    for v in values:
        m = m * v // gcd_all([m, v])
    return m


# -- Cash (games.md, "The draws to the byte") ---------------------------------------------------
NUMBERS = [n for n in range(1, 41) if n not in (5, 10, 20)]


def cash_ways(prize: int, amounts: list[int]) -> list[tuple[int, ...]]:
    ordered = sorted(set(amounts), reverse=True)
    found: list[tuple[int, ...]] = []

    def extend(remaining: int, start: int, parts: tuple[int, ...]) -> None:
        if remaining == 0:
            found.append(parts)
        elif len(parts) < 5:
            for i in range(start, len(ordered)):
                if ordered[i] <= remaining:
                    extend(remaining - ordered[i], i, (*parts, ordered[i]))

    extend(prize, 0, ())
    return found


def cash_design(table: dict[str, Any], v2: bool, prize: int, rng: Stream) -> dict[str, Any]:
    rows = [t for t in table["tiers"] if t["count"] > 0 or not v2]
    amounts = list(table["amounts_cents"]) or sorted((t["prize_cents"] for t in rows), reverse=True)
    if v2:
        prizes = {t["prize_cents"] for t in rows}
        amounts = [a for a in amounts if a in prizes]
    parts: tuple[int, ...] = ()
    if prize:
        ways = cash_ways(prize, amounts)
        parts = ways[rng.below(len(ways))]
    k = len(parts)
    pool = list(NUMBERS)
    for i in range(25 - k):
        j = i + rng.below(37 - i)
        pool[i], pool[j] = pool[j], pool[i]
    stars = [{"number": pool[i], "amount_cents": parts[i]} for i in range(k)]
    if v2:
        all_ways = {t["prize_cents"]: cash_ways(t["prize_cents"], amounts) for t in rows}
        scale = lcm_all([len(w) for w in all_ways.values()])
        weight = dict.fromkeys(amounts, 0)
        for t in rows:
            for way in all_ways[t["prize_cents"]]:
                for part in way:
                    weight[part] += t["count"] * (scale // len(all_ways[t["prize_cents"]]))
        decoys = sorted((a for a in weight if weight[a]), reverse=True)
        g = gcd_all([weight[a] for a in decoys])
        weights = [weight[a] // g for a in decoys]
    for number in pool[5 : 25 - k]:
        amount = decoys[rng.weighted(weights)] if v2 else amounts[rng.below(len(amounts))]
        stars.append({"number": number, "amount_cents": amount})
    for i in range(19):
        j = i + rng.below(20 - i)
        stars[i], stars[j] = stars[j], stars[i]
    return {
        "game": "cash",
        "winning_numbers": sorted(pool[:5]),
        "your_numbers": stars,
        "prize_cents": prize,
    }


# -- Astro --------------------------------------------------------------------------------------
SYMBOLS = ["cosmos", "moon", "comet", "saturn", "explosion", "eclipse", "star", "sun"]
MULTIPLIERS = [2, 3, 4, 6, 10, 20, 100, 1000]
LOSING_PHRASES = [
    "Pas de multiplicateur cette fois-ci.",
    "Les astres restent muets.",
    "Votre étoile brillera une autre fois.",
    "Aucun multiplicateur sous ce ciel.",
]
PHRASES = {  # fairness.md, "Each game's draws": the phrases table
    2: ["Vos gains sont doublés ! (×2)", "Vos gains sont multipliés par 2 !"],
    3: ["Vos gains sont triplés ! (×3)", "Vos gains sont multipliés par 3 !"],
    4: ["Vos gains sont multipliés par 4 !", "Quatre fois plus de gains ! (×4)"],
    6: ["Vos gains sont multipliés par 6 !", "Six fois plus de gains ! (×6)"],
    10: ["Vos gains sont multipliés par 10 !", "Dix fois plus de gains ! (×10)"],
    20: ["Vos gains sont multipliés par 20 !", "Vingt fois plus de gains ! (×20)"],
    100: ["Vos gains sont multipliés par 100 !", "Cent fois plus de gains ! (×100)"],
    1000: ["Vos gains sont multipliés par 1 000 !", "Mille fois plus de gains ! (×1 000)"],
}
PLAIN_WIN_PHRASES = [LOSING_PHRASES[0], LOSING_PHRASES[3]]


def astro_ways(table: dict[str, Any], v2: bool) -> dict[int, list[tuple[int, int | None]]]:
    rows = [t for t in table["tiers"] if t["count"] > 0 or not v2]
    if v2:
        gains = sorted(
            {t["prize_cents"] for t in rows if t["prize_cents"] != 1_600_000}, reverse=True
        )
    else:
        found: set[int] = set()
        for t in rows:
            found |= {s["gain_cents"] for s in t["shows"]} if t["shows"] else {t["prize_cents"]}
        gains = sorted(found, reverse=True)
    ways = {}
    for t in rows:
        prize = t["prize_cents"]
        if t["shows"]:
            ways[prize] = [(s["gain_cents"], s["multiplier"]) for s in t["shows"]]
        elif v2 and prize == 1_600_000:
            ways[prize] = [(800_000, 2)]
        else:
            ways[prize] = [
                (g, m) for g in gains for m in (None, *MULTIPLIERS) if g * (m or 1) == prize
            ]
    return ways


def astro_design(
    table: dict[str, Any], v2: bool, prize: int, rng: Stream, sign: str
) -> dict[str, Any]:
    ways = astro_ways(table, v2)
    symbols = [SYMBOLS[rng.below(8)] for _ in range(5)]
    if prize == 0:
        if rng.below(2) == 1:
            symbols[rng.below(5)] = "sign"
        if v2:
            scale = lcm_all([len(w) for w in ways.values()])
            weight: dict[int, int] = {}
            for t in table["tiers"]:
                if t["count"] > 0:
                    for g, _ in ways[t["prize_cents"]]:
                        share = t["count"] * (scale // len(ways[t["prize_cents"]]))
                        weight[g] = weight.get(g, 0) + share
            gains = sorted(weight, reverse=True)
            g = gcd_all(list(weight.values()))
            gain = gains[rng.weighted([weight[x] // g for x in gains])]
            text = LOSING_PHRASES[rng.below(4)]
        else:
            found: set[int] = set()
            for t in table["tiers"]:
                found |= {s["gain_cents"] for s in t["shows"]} if t["shows"] else {t["prize_cents"]}
            gains = sorted(found, reverse=True)
            gain = gains[rng.below(len(gains))]
            everything = LOSING_PHRASES + [p for m in MULTIPLIERS for p in PHRASES[m]]
            text = everything[rng.below(20)]
    else:
        options = ways[prize]
        gain, multiplier = options[rng.below(len(options))]
        first = rng.below(5)
        second = rng.below(4)
        symbols[first] = "sign"
        symbols[second + (1 if second >= first else 0)] = "sign"
        if multiplier is not None:
            text = PHRASES[multiplier][rng.below(2)]
        elif v2:
            text = PLAIN_WIN_PHRASES[rng.below(2)]
        else:
            text = LOSING_PHRASES[rng.below(4)]
    factor = {p: m for m in MULTIPLIERS for p in PHRASES[m]}.get(text)
    return {
        "game": "astro",
        "sign": sign,
        "symbols": symbols,
        "gain_cents": gain,
        "banner": {"text": text, "multiplier": factor},
        "prize_cents": prize,
    }
