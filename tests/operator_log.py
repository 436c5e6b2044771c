"""A toy operator's transparency log for the witness's tests: grattage.blocks.tlog's tree
and a signing key, with signed tree heads and consistency proofs as the real log gives."""

from __future__ import annotations

from grattage.blocks.signing import Signer, TreeHead
from grattage.blocks.tlog import Frontier, consistency_path, entry_leaf_hash


class OperatorLog:
    def __init__(self, signer: Signer | None = None, history: str = "true") -> None:
        self.history = history
        self.signer = signer or Signer(Signer.new_private_key())
        self.frontier = Frontier()
        self.nodes: dict[tuple[int, int], bytes] = {}
        self.clock_ms = 1_700_000_000_000

    def append(self, count: int = 1) -> None:
        for _ in range(count):
            entry = f'{{"entry":{self.frontier.size},"history":"{self.history}"}}'.encode()
            for level, index, digest in self.frontier.append(entry_leaf_hash(entry)):
                self.nodes[level, index] = digest

    def head(self) -> TreeHead:
        self.clock_ms += 1
        return self.signer.sign_tree_head(self.frontier.size, self.clock_ms, self.frontier.root())

    def consistency(self, first: int, second: int | None = None) -> list[bytes]:
        second = self.frontier.size if second is None else second
        if first in (0, second):
            return []
        return consistency_path(lambda level, index: self.nodes[level, index], first, second)
