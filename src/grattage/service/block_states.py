"""The operator's block actions: open, close, suspend, resume — each one conditional write
in one transaction, audited and logged with the state change (docs/back-office.md)."""

from __future__ import annotations

from collections.abc import Callable

from grattage.errors import Conflict, NotFound
from grattage.games.money import format_euros
from grattage.service.audit_trail import record_block_changes
from grattage.service.context import Platform
from grattage.service.model import Block, BlockState
from grattage.service.ports import Repositories


def close_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """The operator withdraws a block from sale for good; the next pending one opens if no
    block is left on sale (and none is suspended)."""
    _change_state(
        platform,
        block_id,
        ("open", "suspended", "pending"),
        "closed",
        actor,
        "it cannot be closed",
        then=_open_next_if_none_on_sale,
    )


def open_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """Put a pending block on sale alongside the open ones."""
    _change_state(platform, block_id, ("pending",), "open", actor, "only a pending block opens")


def suspend_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """Stop selling a block until it is resumed (an open or pending block)."""
    _change_state(
        platform,
        block_id,
        ("open", "pending"),
        "suspended",
        actor,
        "only an open or pending block is suspended",
    )


def resume_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """Put a suspended block back on sale."""
    _change_state(
        platform, block_id, ("suspended",), "open", actor, "only a suspended block resumes"
    )


def _open_next_if_none_on_sale(repos: Repositories, block: Block) -> None:
    if not repos.blocks.has_open(block.game) and not repos.blocks.has_suspended(block.game):
        repos.blocks.open_next_pending(block.game)


def _change_state(
    platform: Platform,
    block_id: int,
    before: tuple[BlockState, ...],
    after: BlockState,
    actor: str,
    rule: str,
    then: Callable[[Repositories, Block], None] | None = None,
) -> None:
    """Move the block to ``after`` from the first of ``before`` it is in (Conflict, saying
    ``rule``, if none), run ``then`` in the same transaction, and audit every change."""
    now = platform.clock.now()
    with platform.uow.write() as repos:
        block = repos.blocks.get(block_id)
        if block is None:
            raise NotFound(f"no block {block_id!r}")
        if after == "open" and block.state == "pending" and block.commitment_index is None:
            raise Conflict(
                f"block {block_id!r}'s commitment is not in the transparency log yet: it cannot "
                "open before it"
            )
        if after == "open":
            _refuse_a_second_drawn_block(repos, block)
            _refuse_another_price_on_sale(repos, block)
        if not any(repos.blocks.set_state(block_id, after, only_from=state) for state in before):
            raise Conflict(f"block {block_id!r} is {block.state}; {rule}")
        if then is not None:
            then(repos, block)
        record_block_changes(repos, now, actor)


def _refuse_a_second_drawn_block(repos: Repositories, block: Block) -> None:
    """One open block per game when its blocks are drawn (docs/draw.md, "The block of a
    sale"): a receipt names its block at the sale, so there must be nothing to choose."""
    others = [other.id for other in repos.blocks.open_blocks(block.game) if other.id != block.id]
    if others and repos.draws.drawn_blocks([block.id, *others]):
        raise Conflict(
            f"block {others[0]} of {block.game} is open: a drawn game sells from one block at a "
            f"time; block {block.id} opens by itself when block {others[0]} ends"
        )


def _refuse_another_price_on_sale(repos: Repositories, block: Block) -> None:
    """The blocks of a game on sale together share one table and price: the lobby and the game
    page show one (the first open block's), and a sale may come from any open block, so a
    player must never pay another price than the one shown (an outsider was shown 0,50 € and
    debited 5 €)."""
    for other in repos.blocks.open_blocks(block.game):
        if other.id != block.id and (
            other.price_cents != block.price_cents or other.table_json != block.table_json
        ):
            raise Conflict(
                f"block {other.id} of {block.game} is on sale at {format_euros(other.price_cents)}"
                f" (« {other.title} »); block {block.id} would sell at "
                f"{format_euros(block.price_cents)} (« {block.title} ») beside it: blocks on sale "
                "together share one table and price — close or suspend the other first"
            )
