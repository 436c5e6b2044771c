"""The witness's storage (:class:`grattage.service.witness.WitnessStore`): one directory of its
own — the Ed25519 key ``witness-ed25519.key`` and each chain's seed ``chains/<chain_id>.seed``
(32 raw bytes, files 0600, never in the database, backed up with it), and the SQLite file
``witness.db`` (chains, cosigned heads, the clock's floor) in WAL mode.

Nothing here shares a file with the operator's platform. Cosigning runs in a ``BEGIN
IMMEDIATE`` transaction, so two cosignings (threads or processes) never both read the same
"last head" and both write after it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from grattage.blocks.beacon import check_chain
from grattage.blocks.signing import Signer
from grattage.errors import InvalidInput, Unavailable
from grattage.service.witness import CosignedHead, StoredChain

KEY_FILE = "witness-ed25519.key"
DATABASE_FILE = "witness.db"
SCHEMA = """
CREATE TABLE IF NOT EXISTS chains (
    chain_id TEXT PRIMARY KEY, start_ms INTEGER NOT NULL, document TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cosigned (
    id INTEGER PRIMARY KEY AUTOINCREMENT, chain_id TEXT NOT NULL, round INTEGER NOT NULL,
    tree_size INTEGER NOT NULL, root_hash BLOB NOT NULL, time_ms INTEGER NOT NULL,
    sth TEXT NOT NULL, cosignature TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS cosigned_by_round ON cosigned (chain_id, round);
CREATE TABLE IF NOT EXISTS clock (id INTEGER PRIMARY KEY CHECK (id = 1), floor_ms INTEGER);
INSERT OR IGNORE INTO clock VALUES (1, 0);
"""


def _write_secret(path: Path, secret: bytes) -> None:
    """Write a new 0600 file whole (temporary file, fsync, rename): a crash never leaves half
    a key, and an existing file is never replaced."""
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(secret)
        file.flush()
        os.fsync(file.fileno())
    os.link(temporary, path)  # fails if the file exists: a key is never overwritten
    temporary.unlink()


def _read_secret(path: Path, what: str) -> bytes:
    try:
        secret = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput(f"the witness's {what} is missing: {path}") from None
    if len(secret) != 32:
        raise InvalidInput(f"the witness's {what} is not 32 bytes: {path}")
    return secret


class SqliteWitnessStore:
    def __init__(self, directory: Path, create: bool = False) -> None:
        self.directory = directory
        if not (directory / DATABASE_FILE).exists() and not create:
            raise InvalidInput(f"no witness in {directory}: run `grattage witness init` first")
        (directory / "chains").mkdir(parents=True, exist_ok=True, mode=0o700)
        self._local = threading.local()
        self._connection().executescript(SCHEMA)  # idempotent; executescript commits itself
        if create and not (directory / KEY_FILE).exists():
            _write_secret(directory / KEY_FILE, Signer.new_private_key())

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.directory / DATABASE_FILE, timeout=10, isolation_level=None
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            self._local.connection = connection
        return connection

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self._connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise Unavailable(f"the witness's database is busy: {error}") from None
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def signing_key(self) -> bytes:
        return _read_secret(self.directory / KEY_FILE, "key")

    def chains(self) -> list[StoredChain]:
        rows = self._connection().execute("SELECT document FROM chains ORDER BY start_ms")
        public_key = Signer(self.signing_key()).public_key
        stored = []
        for (text,) in rows:
            document = json.loads(text)
            stored.append(StoredChain(check_chain(document, public_key), document))
        return stored

    def chain_seed(self, chain_id: str) -> bytes:
        return _read_secret(self.directory / "chains" / f"{chain_id}.seed", "chain seed")

    def add_chain(self, stored: StoredChain, seed: bytes) -> None:
        # The seed first: a crash in between leaves an unused seed file, never a chain
        # published without the secret to continue it.
        _write_secret(self.directory / "chains" / f"{stored.chain.chain_id}.seed", seed)
        with self._transaction() as connection:
            connection.execute(
                "INSERT INTO chains VALUES (?, ?, ?)",
                (stored.chain.chain_id, stored.chain.start_ms, json.dumps(stored.document)),
            )

    def cosign_atomically(
        self, decide: Callable[[CosignedHead | None], CosignedHead]
    ) -> CosignedHead:
        with self._transaction() as connection:
            head = decide(self._last(connection))
            connection.execute(
                "INSERT INTO cosigned (chain_id, round, tree_size, root_hash, time_ms, sth,"
                " cosignature) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    head.chain_id,
                    head.round,
                    head.tree_size,
                    head.root_hash,
                    head.time_ms,
                    json.dumps(head.sth),
                    json.dumps(head.cosignature),
                ),
            )
            connection.execute(
                "UPDATE clock SET floor_ms = max(floor_ms, ?) WHERE id = 1", (head.time_ms,)
            )
        return head

    _COLUMNS = "chain_id, round, tree_size, root_hash, time_ms, sth, cosignature"

    @staticmethod
    def _record(row: tuple[Any, ...]) -> CosignedHead:
        chain_id, round_number, size, root, time_ms, sth, cosignature = row
        return CosignedHead(
            chain_id,
            round_number,
            size,
            bytes(root),
            time_ms,
            json.loads(sth),
            json.loads(cosignature),
        )

    def _last(self, connection: sqlite3.Connection) -> CosignedHead | None:
        row = connection.execute(
            f"SELECT {self._COLUMNS} FROM cosigned ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else self._record(row)

    def cosigned_for(self, chain_id: str, round_number: int) -> list[CosignedHead]:
        rows = self._connection().execute(
            f"SELECT {self._COLUMNS} FROM cosigned WHERE chain_id = ? AND round = ? ORDER BY id",
            (chain_id, round_number),
        )
        return [self._record(row) for row in rows]

    def last_cosigned(self) -> CosignedHead | None:
        return self._last(self._connection())

    def clock_floor_ms(self) -> int:
        row = self._connection().execute("SELECT floor_ms FROM clock WHERE id = 1").fetchone()
        return int(row[0]) if row else 0

    def raise_clock_floor(self, time_ms: int) -> None:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE clock SET floor_ms = max(floor_ms, ?) WHERE id = 1", (time_ms,)
            )
