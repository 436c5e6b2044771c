"""Person keys on the last name, the first given name and the birth date; Gmail mailboxes
without their dots.

A person key was ``last/all-first-names/date``: « Éloïse Marie » passed for another person
than « Éloïse ». It is now keyed on the first given name alone, recomputed here from the
stored names and birth date (:func:`grattage.service.identity.person`); a Gmail mailbox key
drops the dots of its local part (Gmail ignores them). Where keys now meet, their exclusion
rows are merged (the longest wins) and carried to every account behind the merged key.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from datetime import date, datetime

import sqlalchemy as sa
from alembic import op

from grattage.errors import InvalidInput
from grattage.service.identity import canonical_email, person

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

players = sa.table("players", sa.column("id", sa.Integer), sa.column("birth_date", sa.Date))
identities = sa.table(
    "player_identities",
    sa.column("player_id", sa.Integer),
    sa.column("mailbox_key", sa.String),
    sa.column("person_key", sa.String),
    sa.column("first_name", sa.String),
    sa.column("last_name", sa.String),
)
exclusions = sa.table(
    "identity_exclusions",
    sa.column("key", sa.String),
    sa.column("excluded_until", sa.DateTime),
    sa.column("excluded_forever", sa.Boolean),
)
limits = sa.table(
    "player_limits",
    sa.column("player_id", sa.Integer),
    sa.column("excluded_until", sa.DateTime),
    sa.column("excluded_forever", sa.Boolean),
)


def _mailbox(key: str) -> str:
    try:
        return canonical_email(key).mailbox_key
    except InvalidInput:  # a key migration 0007 kept as it was
        return key


def _person(first: str | None, last: str | None, born: object, old: str | None) -> str | None:
    if first is None or last is None or old is None:
        return old
    birth = born if isinstance(born, date) else date.fromisoformat(str(born)[:10])
    try:
        return person(first, last, birth).key
    except InvalidInput:
        return old


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(
            identities.c.player_id,
            identities.c.mailbox_key,
            identities.c.person_key,
            identities.c.first_name,
            identities.c.last_name,
            players.c.birth_date,
        ).join_from(identities, players, identities.c.player_id == players.c.id)
    ).all()
    renamed: dict[str, str] = {}  # old exclusion key -> new
    keys_of: dict[int, list[str]] = {}
    for player_id, mailbox, person_key, first, last, born in rows:
        new_mailbox = _mailbox(mailbox)
        new_person = _person(first, last, born, person_key)
        renamed[f"mailbox:{mailbox}"] = f"mailbox:{new_mailbox}"
        if person_key is not None and new_person is not None:
            renamed[f"person:{person_key}"] = f"person:{new_person}"
        keys_of[player_id] = [f"mailbox:{new_mailbox}"] + (
            [] if new_person is None else [f"person:{new_person}"]
        )
        if (new_mailbox, new_person) != (mailbox, person_key):
            bind.execute(
                sa.update(identities)
                .where(identities.c.player_id == player_id)
                .values(mailbox_key=new_mailbox, person_key=new_person)
            )
    merged: dict[str, tuple[bool, datetime | None]] = {}
    for key, until, forever in bind.execute(
        sa.select(exclusions.c.key, exclusions.c.excluded_until, exclusions.c.excluded_forever)
    ).all():
        new = renamed.get(key, key)
        was_forever, was_until = merged.get(new, (False, None))
        longest = max((t for t in (until, was_until) if t is not None), default=None)
        merged[new] = (bool(forever) or was_forever, longest)
    bind.execute(sa.delete(exclusions))
    if merged:
        bind.execute(
            sa.insert(exclusions),
            [
                {"key": k, "excluded_forever": f, "excluded_until": None if f else u}
                for k, (f, u) in merged.items()
            ],
        )
    for player_id, keys in keys_of.items():
        for key in keys:
            forever, until = merged.get(key, (False, None))
            if forever:
                bind.execute(
                    sa.update(limits)
                    .where(limits.c.player_id == player_id)
                    .values(excluded_forever=True)
                )
            elif until is not None:
                bind.execute(
                    sa.update(limits)
                    .where(
                        limits.c.player_id == player_id,
                        limits.c.excluded_forever.is_(False),
                        sa.or_(limits.c.excluded_until.is_(None), limits.c.excluded_until < until),
                    )
                    .values(excluded_until=until)
                )


def downgrade() -> None:
    """Keys stay as they are: the old keys let one person pass for two."""
