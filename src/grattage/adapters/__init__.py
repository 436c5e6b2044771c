"""Storage and the other ports' adapters: one module per port.

``accounts`` (players and their sessions), ``operators`` (operators and theirs), ``ledger``,
``blocks``, ``tickets``, ``idempotency``, ``limits``, ``audit_log``, ``reports``,
``reconciliation``; bound together per transaction by ``unit_of_work``, over the engines of
``database``, the schema of ``tables`` and its ``migrations``. ``passwords`` and ``keystore``
are the ports that are not storage.

One SQL style per kind of statement:

- What every purchase (or every request) runs is plain SQL on the driver, in
  :mod:`grattage.adapters.driver_sql` and nowhere else: through SQLAlchemy each statement
  costs several times what SQLite takes to run it.
- Everything else is SQLAlchemy Core, built where it runs, per call: it reads as the SQL it
  sends, SQLAlchemy caches its compiled form, and off the hot path building it is noise
  beside the round trip. No statement is prebuilt at import.
- Times cross into and out of the database through one codec,
  :mod:`grattage.adapters.db_time`.

Repositories answer facts and perform conditional writes (``UPDATE … WHERE <rule still
holds> RETURNING``); the rules that decide what to write are the service's.
"""
