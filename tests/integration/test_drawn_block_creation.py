"""A drawn block's creation walks its operator chain beside its tree (in a process of its own):
what it stores is what the one-process walk makes, byte for byte — the commitment's head, the
chain's length and the sealed checkpoints (docs/draw.md)."""

from __future__ import annotations

import json

from grattage.blocks.commitment import CHUNKS_PER_TASK
from grattage.blocks.merkle import CHUNK_LEAVES
from grattage.blocks.operator_chain import create_chain
from grattage.service.emissions import create_emission
from support import World, tiny_table


def test_a_drawn_block_stores_the_chain_and_checkpoints_create_chain_makes(world: World) -> None:
    table = tiny_table("cash").scaled(4000)  # 160 000 units: two tasks, so the pool and walker
    assert table.block_size > CHUNK_LEAVES * CHUNKS_PER_TASK
    steps = []
    created = create_emission(
        world.platform, "cash", 1, table=table, progress=lambda step, *_: steps.append(step)
    )
    (block_id,) = created.block_ids
    with world.platform.uow.read() as repos:
        (block,) = [b for b in repos.blocks.all("cash") if b.id == block_id]
        stored = repos.draws.checkpoints(block_id)
        commitment = repos.blocks.commitment(block_id)
    assert commitment is not None
    head, sealed = create_chain(world.platform.keys.get(block.key_id), table.block_size)
    assert stored == (table.block_size, sealed)
    members = json.loads(commitment[0])
    assert (members["chain_head"], members["chain_length"]) == (head.hex(), table.block_size)
    assert "block 1: committing" in steps  # the job still reports the commitment's progress
