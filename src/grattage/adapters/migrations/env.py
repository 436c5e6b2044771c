"""Alembic environment: runs on the engine that `migrate` hands over."""

from __future__ import annotations

from alembic import context

from grattage.adapters.tables import metadata

engine = context.config.attributes["engine"]

with engine.connect() as connection:
    connection.execution_options(grattage_write=True)
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
