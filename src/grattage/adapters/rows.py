"""Rows into the service's records, and what both kinds of account share."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, TypeVar

from sqlalchemy import Connection, Table, insert
from sqlalchemy.exc import IntegrityError

from grattage.errors import AlreadyExists


class _Record(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


R = TypeVar("R", bound=_Record)


def record_of(record: type[R], row: Any) -> R:
    """The ``record`` (a dataclass) whose fields are the row's columns of the same names."""
    return record(**{name: getattr(row, name) for name in record.__dataclass_fields__})


class SqlAccountTable:
    """What players and operators share: their table (``id``, ``email``) and an insert that
    refuses a taken e-mail address."""

    table: ClassVar[Table]

    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def _insert(self, taken: str, **values: Any) -> int:
        """The new account's id; AlreadyExists (saying ``taken``) if its address is taken."""
        try:
            with self.db.begin_nested():
                return int(
                    self.db.execute(
                        insert(self.table).values(**values).returning(self.table.c.id)
                    ).scalar_one()
                )
        except IntegrityError:
            raise AlreadyExists(taken) from None

    def _by_email(self, email: str) -> Any:
        return self.db.execute(self.table.select().where(self.table.c.email == email)).first()
