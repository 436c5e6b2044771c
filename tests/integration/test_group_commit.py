"""SQLite's group commit: shared commits, private refusals, and a failed commit told to all."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Connection

from grattage.adapters.database import WRITE_OPTION, make_engine
from grattage.adapters.group_commit import GroupCommitter, HeldBatch, OutsideTheHeldBatchError
from grattage.errors import Unavailable


def committer(tmp_path: Path) -> GroupCommitter:
    engine = make_engine(f"sqlite:///{tmp_path / 'group.db'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE parents (id INTEGER PRIMARY KEY)")
        connection.exec_driver_sql(
            "CREATE TABLE rows (id INTEGER PRIMARY KEY, parent INTEGER "
            "REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    return GroupCommitter(engine, lambda connection: connection, tmp_path / "group.lock")


def rows(group: GroupCommitter) -> set[int]:
    with group._engine.connect() as connection:  # a reader, outside the committer
        connection.execution_options(**{WRITE_OPTION: False})
        return {row[0] for row in connection.exec_driver_sql("SELECT id FROM rows")}


def run_together(count: int, work) -> list[BaseException | None]:  # type: ignore[no-untyped-def]
    start = threading.Barrier(count)
    outcomes: list[BaseException | None] = [None] * count

    def run(index: int) -> None:
        start.wait()
        try:
            work(index)
        except BaseException as error:
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_concurrent_writers_share_commits_and_a_refusal_undoes_only_its_own_work(
    tmp_path: Path,
) -> None:
    group = committer(tmp_path)

    def write(index: int) -> None:
        with group.write() as connection:
            assert isinstance(connection, Connection)
            connection.exec_driver_sql(f"INSERT INTO rows (id) VALUES ({index})")
            if index % 3 == 0:
                raise ValueError("refused")

    outcomes = run_together(30, write)
    assert [i for i, o in enumerate(outcomes) if isinstance(o, ValueError)] == list(range(0, 30, 3))
    assert rows(group) == {i for i in range(30) if i % 3}
    group.close()


def test_a_failed_commit_reaches_every_caller_of_its_batch_and_keeps_nothing(
    tmp_path: Path,
) -> None:
    group = committer(tmp_path)
    writers = 6

    def write(index: int) -> None:
        with group.write() as connection:
            # Writer 0's row breaks a deferred foreign key, detected only at COMMIT; it holds
            # the connection until the others queue behind it, so they all share its batch.
            parent = 999 if index == 0 else "NULL"
            connection.exec_driver_sql(f"INSERT INTO rows (id, parent) VALUES ({index}, {parent})")
            while index == 0 and group._queued < writers - 1:
                time.sleep(0.001)

    first = threading.Thread(target=lambda: outcomes.append(_catch(write, 0)))
    outcomes: list[BaseException | None] = []
    first.start()
    while group._batch is None:
        time.sleep(0.001)
    others = [
        threading.Thread(target=lambda i=i: outcomes.append(_catch(write, i)))
        for i in range(1, writers)
    ]
    for thread in [*others]:
        thread.start()
    for thread in [first, *others]:
        thread.join()
    assert len(outcomes) == writers
    assert all(isinstance(outcome, Unavailable) for outcome in outcomes), outcomes
    assert rows(group) == set()
    # The committer recovers: the next write goes through on a fresh connection.
    with group.write() as connection:
        connection.exec_driver_sql("INSERT INTO rows (id) VALUES (100)")
    assert rows(group) == {100}
    group.close()


def _catch(work, index: int) -> BaseException | None:  # type: ignore[no-untyped-def]
    try:
        work(index)
    except BaseException as error:
        return error
    return None


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> None:
    before = threading.active_count()
    yield  # type: ignore[misc]
    assert threading.active_count() <= before + 1


def test_a_held_batch_keeps_its_writes_unsaved_and_other_writers_waiting_until_release(
    tmp_path: Path,
) -> None:
    group = committer(tmp_path)
    batch = HeldBatch()
    group.hold(batch)
    for index in range(3):
        # joins the held batch: no commit, no wait
        batch.run(lambda index=index: insert_into(group, f"(id) VALUES ({index})"))

    def refused() -> None:
        with group.write() as connection:
            connection.exec_driver_sql("INSERT INTO rows (id) VALUES (3)")
            raise ValueError("refused")

    with pytest.raises(ValueError):
        batch.run(refused)
    outsider = threading.Thread(target=lambda: insert_into(group, "(id) VALUES (10)"))
    outsider.start()
    time.sleep(0.05)
    assert outsider.is_alive(), "another thread wrote while the batch was held"
    assert rows(group) == set(), "a held write was visible before release"
    assert group.release() == 4
    outsider.join()
    assert rows(group) == {0, 1, 2, 10}
    group.close()


def test_a_held_batch_that_cannot_be_saved_reports_it_and_keeps_nothing(tmp_path: Path) -> None:
    group = committer(tmp_path)
    batch = HeldBatch()
    group.hold(batch)
    batch.run(lambda: insert_into(group, "(id) VALUES (1)"))
    # breaks a deferred foreign key: seen only at COMMIT
    batch.run(lambda: insert_into(group, "(id, parent) VALUES (2, 999)"))
    with pytest.raises(Unavailable):
        group.release()
    assert rows(group) == set()
    with group.write() as connection:  # and the committer carries on
        connection.exec_driver_sql("INSERT INTO rows (id) VALUES (3)")
    assert rows(group) == {3}
    group.close()


def insert_into(group: GroupCommitter, values: str) -> None:
    with group.write() as connection:
        connection.exec_driver_sql(f"INSERT INTO rows {values}")


def test_only_the_work_a_held_batch_runs_joins_it_and_other_threads_wait(
    tmp_path: Path,
) -> None:
    group = committer(tmp_path)
    batch = HeldBatch()
    helper = threading.Thread(target=group.hold, args=(batch,))  # held from another thread
    helper.start()
    helper.join()
    batch.run(lambda: insert_into(group, "(id) VALUES (1)"))
    outsider = threading.Thread(target=lambda: insert_into(group, "(id) VALUES (2)"))
    outsider.start()
    time.sleep(0.05)
    assert outsider.is_alive(), "a write outside the batch joined it"
    assert group.release() == 1
    outsider.join()
    assert rows(group) == {1, 2}
    group.close()


def test_touching_the_database_on_a_held_batchs_thread_outside_the_batch_fails_loudly(
    tmp_path: Path,
) -> None:
    group = committer(tmp_path)
    batch = HeldBatch()
    group.hold(batch)
    batch.run(lambda: insert_into(group, "(id) VALUES (1)"))
    with pytest.raises(OutsideTheHeldBatchError, match="outside HeldBatch.run"):
        insert_into(group, "(id) VALUES (2)")
    with pytest.raises(OutsideTheHeldBatchError):
        group.held_connection()
    assert group.release() == 1
    assert rows(group) == {1}
    insert_into(group, "(id) VALUES (3)")  # nothing held any more: an ordinary write
    assert rows(group) == {1, 3}
    group.close()
