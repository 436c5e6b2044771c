"""Persons and mailboxes: who is behind each player account, and exclusions kept per mailbox
and per person rather than per account.

Existing accounts get their mailbox key from their address (normalised as sign-up now does,
:func:`grattage.service.identity.canonical_email`) and no person: their names were never
asked, so they are known by their mailbox only. A stored address is rewritten to its
normalised form (``name@example.org.`` → ``name@example.org``) unless another account already
has that form. Each exclusion in force is carried to its mailbox, and from there to every
other account of the same mailbox (``name+1@…`` opened after ``name@…`` excluded itself).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

from grattage.errors import InvalidInput
from grattage.service.identity import EmailAddress, canonical_email

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _normalised(email: str) -> EmailAddress:
    try:
        return canonical_email(email)
    except InvalidInput:  # an address sign-up now refuses: keyed as it is
        return EmailAddress(address=email, mailbox_key=email.lower())


def upgrade() -> None:
    op.create_table(
        "player_identities",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("mailbox_key", sa.String(length=254), nullable=False),
        sa.Column("person_key", sa.String(length=255), nullable=True),
        sa.Column("first_name", sa.String(length=100), nullable=True),
        sa.Column("last_name", sa.String(length=100), nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("player_id"),
    )
    op.create_index("ix_player_identities_mailbox_key", "player_identities", ["mailbox_key"])
    op.create_index("ix_player_identities_person_key", "player_identities", ["person_key"])
    op.create_table(
        "identity_exclusions",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("excluded_until", sa.DateTime(), nullable=True),
        sa.Column("excluded_forever", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    _backfill(op.get_bind())


def _backfill(bind: sa.Connection) -> None:
    players = sa.table("players", sa.column("id", sa.Integer), sa.column("email", sa.String))
    limits = sa.table(
        "player_limits",
        sa.column("player_id", sa.Integer),
        sa.column("excluded_until", sa.DateTime),
        sa.column("excluded_forever", sa.Boolean),
    )
    identities = sa.table(
        "player_identities", sa.column("player_id", sa.Integer), sa.column("mailbox_key")
    )
    exclusions = sa.table(
        "identity_exclusions",
        sa.column("key", sa.String),
        sa.column("excluded_until", sa.DateTime),
        sa.column("excluded_forever", sa.Boolean),
    )
    rows = bind.execute(sa.select(players.c.id, players.c.email).order_by(players.c.id)).all()
    taken = {email for _, email in rows}
    mailbox_of: dict[int, str] = {}
    for player_id, email in rows:
        normal = _normalised(email)
        mailbox_of[player_id] = normal.mailbox_key
        if normal.address != email and normal.address not in taken:
            bind.execute(
                sa.update(players).where(players.c.id == player_id).values(email=normal.address)
            )
            taken.add(normal.address)
    if mailbox_of:
        bind.execute(
            sa.insert(identities),
            [{"player_id": id_, "mailbox_key": key} for id_, key in mailbox_of.items()],
        )
    # The longest exclusion of each mailbox, carried to all of its accounts.
    forever: set[str] = set()
    until: dict[str, datetime] = {}
    for player_id, excluded_until, excluded_forever in bind.execute(
        sa.select(limits.c.player_id, limits.c.excluded_until, limits.c.excluded_forever)
    ):
        mailbox = mailbox_of.get(player_id)
        if mailbox is None:
            continue
        if excluded_forever:
            forever.add(mailbox)
        elif excluded_until is not None and (
            mailbox not in until or until[mailbox] < excluded_until
        ):
            until[mailbox] = excluded_until
    for mailbox in forever | set(until):
        is_forever = mailbox in forever
        ends = None if is_forever else until[mailbox]
        bind.execute(
            sa.insert(exclusions).values(
                key=f"mailbox:{mailbox}", excluded_until=ends, excluded_forever=is_forever
            )
        )
        behind = [id_ for id_, key in mailbox_of.items() if key == mailbox]
        for player_id in behind:
            if (
                bind.execute(
                    sa.select(limits.c.player_id).where(limits.c.player_id == player_id)
                ).first()
                is None
            ):
                continue
            values: dict[str, object] = (
                {"excluded_forever": True} if is_forever else {"excluded_until": ends}
            )
            statement = sa.update(limits).where(limits.c.player_id == player_id)
            if not is_forever:
                statement = statement.where(
                    limits.c.excluded_forever.is_(False),
                    sa.or_(limits.c.excluded_until.is_(None), limits.c.excluded_until < ends),
                )
            bind.execute(statement.values(**values))


def downgrade() -> None:
    op.drop_table("identity_exclusions")
    op.drop_index("ix_player_identities_person_key", table_name="player_identities")
    op.drop_index("ix_player_identities_mailbox_key", table_name="player_identities")
    op.drop_table("player_identities")
