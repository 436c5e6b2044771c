"""Rows into the service's records, and the failed log-ins kept on both kinds of account."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Protocol, TypeVar

from sqlalchemy import Connection, Table, insert, update
from sqlalchemy.exc import IntegrityError

from grattage.errors import AlreadyExists


class _Record(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


R = TypeVar("R", bound=_Record)


def record_of(record: type[R], row: Any) -> R:
    """The ``record`` (a dataclass) whose fields are the row's columns of the same names."""
    return record(**{name: getattr(row, name) for name in record.__dataclass_fields__})


class SqlAccountTable:
    """What players and operators share: their table (``id``, ``email``, ``failed_logins``,
    ``locked_until``), an insert that refuses a taken e-mail address, and the failed log-ins
    of :class:`~grattage.service.ports.FailedLogIns`."""

    table: ClassVar[Table]

    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def _insert(self, taken: str, **values: Any) -> int:
        """The new account's id; AlreadyExists (saying ``taken``) if its address is taken."""
        try:
            with self.db.begin_nested():
                return int(
                    self.db.execute(
                        insert(self.table)
                        .values(**values, failed_logins=0)
                        .returning(self.table.c.id)
                    ).scalar_one()
                )
        except IntegrityError:
            raise AlreadyExists(taken) from None

    def _by_email(self, email: str) -> Any:
        return self.db.execute(self.table.select().where(self.table.c.email == email)).first()

    def count_failed_log_in(self, account_id: int) -> int:
        return int(
            self.db.execute(
                update(self.table)
                .where(self.table.c.id == account_id)
                .values(failed_logins=self.table.c.failed_logins + 1)
                .returning(self.table.c.failed_logins)
            ).scalar_one()
        )

    def lock(self, account_id: int, until: datetime) -> None:
        self._set_lock(account_id, until)

    def clear_failed_log_ins(self, account_id: int) -> None:
        self._set_lock(account_id, None)

    def _set_lock(self, account_id: int, until: datetime | None) -> None:
        self.db.execute(
            update(self.table)
            .where(self.table.c.id == account_id)
            .values(failed_logins=0, locked_until=until)
        )
