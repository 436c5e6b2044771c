"""Wire the service to real storage from the settings: the one place the layers meet."""

from __future__ import annotations

import logging

from grattage.adapters.database import PostgresTimeouts, describe_database, make_engine
from grattage.adapters.errors import database_errors_mapped
from grattage.adapters.exclusion_register import FileExclusionRegister
from grattage.adapters.keystore import FileKeyStore
from grattage.adapters.migrations import migrate, schema_revision
from grattage.adapters.passwords import Argon2Passwords
from grattage.adapters.unit_of_work import SqlUnitOfWork
from grattage.adapters.witness_client import WitnessClient
from grattage.adapters.witness_port import HttpWitness
from grattage.clock import Clock, SystemClock
from grattage.errors import InvalidInput, NoDatabase
from grattage.service.context import Platform
from grattage.service.responsible import stake_check_for
from grattage.settings import Settings

log = logging.getLogger("grattage.bootstrap")


def build_platform(
    settings: Settings,
    clock: Clock | None = None,
    run_migrations: bool = True,
    schema: str | None = None,
    create_database: bool = True,
) -> Platform:
    """The platform on the database of ``settings``, its schema brought up to date first when
    ``run_migrations``. With ``create_database`` false (every CLI command but ``migrate`` and
    ``demo``) a database that does not exist, or was never migrated, is refused with
    :class:`NoDatabase` instead of being created."""
    register_file = settings.exclusion_register_file
    # Read before the database is opened: a bad file stops the start with its one-line reason.
    register = None if register_file is None else FileExclusionRegister(register_file)
    if register is None:
        log.info("no national exclusion register (GRATTAGE_EXCLUSION_REGISTER_FILE unset)")
    where = describe_database(settings.database_url)
    timeouts = PostgresTimeouts(
        lock_ms=settings.postgres_lock_timeout_ms,
        statement_ms=settings.postgres_statement_timeout_ms,
        idle_in_transaction_ms=settings.postgres_idle_in_transaction_timeout_ms,
        connect_s=settings.postgres_connect_timeout_seconds,
        tcp_ms=settings.postgres_tcp_timeout_ms,
    )
    engine = make_engine(
        settings.database_url, schema=schema, create=create_database, timeouts=timeouts
    )
    try:
        with database_errors_mapped(where):
            if not create_database and schema_revision(engine) is None:
                raise NoDatabase(
                    f"the database at {where} is not migrated; run `grattage migrate` first"
                )
            if run_migrations:
                migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    witness = _witness(settings)
    return Platform(
        uow=SqlUnitOfWork(engine),
        keys=FileKeyStore(settings.key_dir),
        policy=settings,
        clock=clock or SystemClock(),
        stake_checks=[stake_check_for(settings)],
        passwords=Argon2Passwords(
            settings.password_time_cost,
            settings.password_memory_kib,
            at_once=settings.password_checks_at_once,
            wait_seconds=settings.password_wait_seconds,
        ),
        exclusion_register=register,
        witness=witness,
    )


def _witness(settings: Settings) -> HttpWitness | None:
    """The witness of the settings, its key pinned; None when none is set (blocks are then
    committed undrawn)."""
    if settings.witness_url is None:
        log.info("no witness (GRATTAGE_WITNESS_URL unset): new blocks are not drawn")
        return None
    if settings.witness_public_key is None:
        raise InvalidInput(
            "GRATTAGE_WITNESS_URL is set without GRATTAGE_WITNESS_PUBLIC_KEY: the witness's "
            "key must be pinned (its GET /witness/key)"
        )
    client = WitnessClient(settings.witness_url, bytes.fromhex(settings.witness_public_key))
    return HttpWitness(client)
