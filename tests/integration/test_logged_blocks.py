"""Blocks and sales in the transparency log: a block opens only once its commitment is
logged; its life and every sale are logged in order; the monitor finds the log clean."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from grattage.entrypoints.cli.monitor import LogClient, watch
from grattage.errors import Conflict, VerificationFailed
from grattage.service import emissions, tickets, transparency
from grattage.service.transparency import queue_entry
from support import World, bought, tiny_table


class ServedLog(LogClient):
    def __init__(self, client: TestClient) -> None:
        super().__init__("http://log.test")
        self.client = client

    def get(self, path: str, **params: int) -> object:
        answer = self.client.get(f"/api/log/{path}", params=params)
        if answer.status_code != 200:
            raise VerificationFailed(f"the log answered {answer.status_code}")
        return answer.json()


def kinds(world: World) -> list[str]:
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    return [item["entry"]["kind"] for item in transparency.entries(world.platform, 0, size)]


def test_a_block_whose_commitment_is_not_logged_cannot_open(world: World) -> None:
    world.stock("cash", blocks=2)
    blocks = emissions.list_blocks(world.platform, "cash")
    assert [block.state for block in blocks] == ["open", "pending"]
    pending = blocks[1]
    with world.platform.uow.write() as repos:  # forget where the commitment was logged
        repos.connection.exec_driver_sql(  # type: ignore[attr-defined]
            f"UPDATE blocks SET commitment_index = NULL WHERE id = {pending.id}"
        )
    with pytest.raises(Conflict, match="not in the transparency log"):
        emissions.open_block(world.platform, pending.id)
    emissions.close_block(world.platform, blocks[0].id)  # the next pending would open: not it
    assert emissions.list_blocks(world.platform, "cash")[1].state == "pending"


def test_a_blocks_life_and_its_sales_are_logged_and_the_monitor_finds_them_clean(
    world: World, client: TestClient
) -> None:
    world.stock("astro")
    player = world.player(10_000)
    sold = [bought(world, player, game_name="astro", mode="auto", sign="leo")[0] for _ in range(5)]
    assert [view.receipt["sequence"] for view in sold if view.receipt] == [0, 1, 2, 3, 4]
    block = emissions.list_blocks(world.platform, "astro")[0]
    emissions.suspend_block(world.platform, block.id)
    emissions.resume_block(world.platform, block.id)
    emissions.close_block(world.platform, block.id)
    assert kinds(world) == [
        "block.commitment",
        "block.opened",
        # each sale drawn once its round is out: the witness's chain logged with the first
        *["sale.receipt", "beacon.chain", "draw.round", "sale.drawn"],
        *["sale.receipt", "draw.round", "sale.drawn"] * 4,
        "block.suspended",
        "block.resumed",
        "block.ended",
    ]
    size = transparency.current_head(world.platform).tree_size
    ended = transparency.entries(world.platform, size - 1, size - 1)[0]["entry"]
    table = tiny_table("astro")
    assert ended["units_sold"] == 5 and ended["units_never_sold"] == table.block_size - 5
    assert sum(row["count"] for row in ended["prizes_never_sold"]) == table.prizes_count - sum(
        1 for view in sold if view.prize_cents
    )
    _, checked = watch(ServedLog(client), None)
    assert checked == size


def test_a_sale_inserted_into_the_log_afterwards_is_caught_by_the_monitor(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    player = world.player(10_000)
    receipt = bought(world, player, game_name="cash", mode="auto")[0].receipt
    assert receipt is not None
    with world.platform.uow.write() as repos:  # the operator replays a receipt it signed
        queue_entry(repos, world.clock.now(), "sale.receipt", {"receipt": receipt})
    transparency.integrate_all(world.platform)
    with pytest.raises(VerificationFailed, match="sequence 0 where 1 was next"):
        watch(ServedLog(client), None)


# undrawn: the end at the sale itself (a drawn block ends after its draws: test_drawn_sales)
@pytest.mark.parametrize("world_settings", [{"drawn": False}])
@pytest.mark.parametrize("close_on_top_prize", [False, True], ids=["exhausted", "top-prize"])
def test_a_block_ended_by_a_sale_ends_after_that_sale_s_receipt_and_the_log_is_clean(
    world: World, client: TestClient, close_on_top_prize: bool
) -> None:
    """The sale of a block's last unit exhausts it and opens the next; with the operator's
    choice, the sale of its last top prize closes it: either way the block's end (and the next
    block's opening) come after that sale's receipt, or a monitor counts one sale too few."""
    world.platform.policy = world.settings.model_copy(  # type: ignore[misc]
        update={"close_block_when_top_prize_sold": close_on_top_prize}
    )
    world.stock("cash", blocks=2)
    player = world.player(100 * 500)
    ended = None
    for _ in range(45):
        tickets.buy(world.platform, player, game_name="cash", mode="auto")
        sequence = kinds(world)
        if "block.ended" in sequence:
            ended = sequence.index("block.ended")
            break
    assert ended is not None and sequence[ended - 1] == "sale.receipt"
    assert sequence[ended + 1 :] == ["block.opened"]
    _, checked = watch(ServedLog(client), None)
    assert checked == len(sequence)
