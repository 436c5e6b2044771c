"""Wire the service to real storage from the settings: the one place the layers meet."""

from __future__ import annotations

from grattage.adapters.database import describe_database, make_engine
from grattage.adapters.errors import database_errors_mapped
from grattage.adapters.keystore import FileKeyStore
from grattage.adapters.migrations import migrate, schema_revision
from grattage.adapters.passwords import Argon2Passwords
from grattage.adapters.unit_of_work import SqlUnitOfWork
from grattage.clock import Clock, SystemClock
from grattage.errors import NoDatabase
from grattage.service.context import Platform
from grattage.service.responsible import stake_check_for
from grattage.settings import Settings


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
    where = describe_database(settings.database_url)
    engine = make_engine(settings.database_url, schema=schema, create=create_database)
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
    return Platform(
        uow=SqlUnitOfWork(engine),
        keys=FileKeyStore(settings.key_dir),
        policy=settings,
        clock=clock or SystemClock(),
        stake_checks=[stake_check_for(settings)],
        passwords=Argon2Passwords(settings.password_time_cost, settings.password_memory_kib),
    )
