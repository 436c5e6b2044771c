"""The one exception hierarchy of grattage.

Every error a user can cause is one of these; the adapters turn database and driver errors into
them (:mod:`grattage.adapters.errors`), and the entry points map the branches to HTTP statuses
(:mod:`grattage.entrypoints.http.errors`) and CLI exit codes (:mod:`grattage.entrypoints.cli`),
each in one table. Messages name the offending value with ``{value!r}``. ``code`` is the stable
machine-readable name sent as ``{"error": code}`` by the API.

    GrattageError ........................ (HTTP status / CLI exit code)
    ├── InvalidInput ..................... the caller sent something malformed (422 / 2)
    │   ├── UnknownGame                    no game of that name
    │   ├── InvalidChoice                  a missing or unknown zodiac sign, a choice a game refuses
    │   ├── InvalidTicket                  a ticket document that breaks a rule of its game
    │   ├── InvalidPrizeTable              a prize-table file the game cannot use, naming the row
    │   ├── PrizeNotOffered                a prize the table has no tier for
    │   ├── InvalidBlockFile               a block file that is malformed, truncated or tampered
    │   ├── InvalidZone                    a zone id the ticket does not have
    │   ├── ZoneNotRevealable              a zone that cannot be revealed yet (Astro's banner)
    │   ├── UnstorableValue                a value the database refuses to store (a NUL in a text)
    │   └── NoDatabase                     the database named by the settings does not exist
    ├── VerificationFailed ............... well-formed data that fails its proof (422 / 1)
    ├── NotFound ......................... no such thing, or not yours (404 / 4)
    │   └── NoTrySession                   no try session on this cookie, or it expired
    ├── Unauthorized ..................... no valid credentials (401 / 3)
    │   └── AccountLocked                  too many failed log-ins
    ├── Forbidden ........................ valid credentials without the right (403 / 3)
    │   ├── SelfExcluded                   the player (the person, the mailbox) excluded themself
    │   ├── NationallyExcluded             the person is on the national exclusion register
    │   └── AccountSuspended               an operator suspended the player's account
    ├── Conflict ......................... the request clashes with the current state (409 / 3)
    │   ├── InsufficientBalance            the balance cannot pay the stake
    │   │   └── TryBalanceSpent            the try session's play money cannot pay it
    │   ├── TryLimitReached                a try session bought its most tickets
    │   ├── SoldOut                        no open block of the game has an unsold unit
    │   ├── NotOnSale                      every block left of the game is suspended or closed
    │   ├── IdempotencyConflict            an idempotency key reused with another request
    │   ├── LimitReached                   a responsible-gaming limit would be exceeded
    │   ├── AlreadyExists                  e.g. an e-mail address already registered
    │   ├── RoundClosed                    the witness: a head for a round already published
    │   ├── InconsistentHead               the witness: a head not extending the last cosigned
    │   └── NotDrawn                       a drawn sale's ticket before its unit is drawn
    ├── RateLimited ...................... too many requests from a client or overall (429 / 5)
    ├── Unavailable ...................... the system cannot serve right now, retry later (503 / 5)
    │   ├── WitnessUnavailable             the witness cannot be reached, or cannot serve now
    │   ├── OutcomeUnknown                 the connection died during COMMIT: retry, same key
    │   ├── WalletBusy                     a batched purchase found its wallet held (retried)
    │   └── Busy                           every password check slot stayed taken: retry soon
    └── Inconsistent ..................... stored records contradict themselves (500 / 3)
"""

from __future__ import annotations


class GrattageError(Exception):
    """Base of every error grattage raises on purpose.

    ``retry_after_seconds``, when set, is how long the caller should wait before trying again
    (the API sends it as ``Retry-After``)."""

    code = "error"
    details: dict[str, object] | None = None
    """What a page needs to word the error itself, in numbers (the API sends it as
    ``details``); None for most errors, whose code says it all."""

    def __init__(self, message: str, *, retry_after_seconds: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_seconds = retry_after_seconds


class InvalidInput(GrattageError):
    code = "invalid_input"


class UnknownGame(InvalidInput):
    code = "unknown_game"


class InvalidChoice(InvalidInput):
    code = "invalid_choice"


class InvalidTicket(InvalidInput):
    code = "invalid_ticket"


class InvalidPrizeTable(InvalidInput):
    code = "invalid_prize_table"


class PrizeNotOffered(InvalidInput):
    code = "prize_not_offered"


class InvalidBlockFile(InvalidInput):
    code = "invalid_block_file"


class InvalidZone(InvalidInput):
    code = "invalid_zone"


class ZoneNotRevealable(InvalidInput):
    code = "zone_not_revealable"


class UnstorableValue(InvalidInput):
    code = "unstorable_value"


class NoDatabase(InvalidInput):
    """The settings name a database that does not exist (only ``migrate`` and ``demo`` create
    one): a mistyped path or a command run from another folder, never silently an empty one."""

    code = "no_database"


class VerificationFailed(GrattageError):
    code = "verification_failed"


class NotFound(GrattageError):
    code = "not_found"


class NoTrySession(NotFound):
    """The try mode's cookie names no unexpired try session: the page starts a new one."""

    code = "no_try_session"


class Unauthorized(GrattageError):
    code = "unauthorized"


class AccountLocked(Unauthorized):
    code = "account_locked"


class Forbidden(GrattageError):
    code = "forbidden"


class SelfExcluded(Forbidden):
    """The player (or the person, or the mailbox) is self-excluded; ``details`` say until
    when (``{"until": ISO 8601}``, or ``{"until": null, "permanent": true}``), so a page can
    give the date."""

    code = "self_excluded"

    def __init__(self, message: str, *, until: str | None = None) -> None:
        super().__init__(message)
        self.details = {"until": until, "permanent": until is None}


class NationallyExcluded(Forbidden):
    code = "nationally_excluded"


class AccountSuspended(Forbidden):
    """An operator suspended the account: no log-in, purchase or deposit until they lift it
    (its tickets already bought still finish, their prizes paid)."""

    code = "account_suspended"


class Conflict(GrattageError):
    code = "conflict"


class InsufficientBalance(Conflict):
    code = "insufficient_balance"


class TryBalanceSpent(InsufficientBalance):
    """Play money only: the page offers a refill, never a deposit."""

    code = "try_balance_spent"


class TryLimitReached(Conflict):
    code = "try_limit_reached"


class SoldOut(Conflict):
    code = "sold_out"


class NotOnSale(Conflict):
    """Units are left, but the operator suspended or closed every block that holds them."""

    code = "not_on_sale"


class IdempotencyConflict(Conflict):
    code = "idempotency_conflict"


class LimitReached(Conflict):
    """A weekly limit the request would pass; its details say which, the limit in force, what
    is left this week and when the week resets, so a page can say all of it in French."""

    code = "limit_reached"

    def __init__(
        self,
        message: str,
        *,
        limit: str | None = None,
        limit_cents: int = 0,
        used_cents: int = 0,
        resets_at: str = "",
    ) -> None:
        super().__init__(message)
        if limit is None:  # an operator's own check (a stake_checks hook) may say only why
            return
        self.details = {
            "limit": limit,
            "limit_cents": limit_cents,
            "used_cents": used_cents,
            "remaining_cents": max(0, limit_cents - used_cents),
            "resets_at": resets_at,
        }


class AlreadyExists(Conflict):
    code = "already_exists"


class RoundClosed(Conflict):
    """The witness cosigns a head for a round only before publishing it (and not far ahead)."""

    code = "round_closed"


class InconsistentHead(Conflict):
    """A tree head that does not extend the last one the witness cosigned: older, another root
    for the same size (a split view), or a consistency proof that fails."""

    code = "inconsistent_head"


class NotDrawn(Conflict):
    """A drawn sale's ticket is ``covered`` until its round is out: nothing to reveal yet."""

    code = "not_drawn"


class RateLimited(GrattageError):
    """A client address, or everyone together, sent more log-ins or sign-ups than allowed."""

    code = "rate_limited"


class Unavailable(GrattageError):
    code = "unavailable"


class WitnessUnavailable(Unavailable):
    """The witness cannot be reached, or answers that it cannot serve now: nothing is sold or
    drawn without it until it answers again."""


class OutcomeUnknown(Unavailable):
    """The connection to the database was lost while its COMMIT was under way (a lane batch's
    or any write's): the change may or may not be kept, and nobody can tell until the database
    answers again. Retry with the same Idempotency-Key: it answers the purchase kept, or makes
    it now; another write is looked at before it is done again."""

    code = "outcome_unknown"


class WalletBusy(Unavailable):
    """PostgreSQL: a purchase in a lane batch found its player's wallet held by another
    transaction (the drawer crediting a round's winners, the sweeper). The batch does not wait
    for it — it holds other wallets, which that transaction may want next — but runs the
    purchase again in a later batch, and answers this only if the wallet stayed held."""


class Busy(Unavailable):
    """Every password-check slot of the process stayed taken for the whole wait."""

    code = "busy"


class Inconsistent(GrattageError):
    """The database contradicts itself (e.g. a block's count of sales behind its tickets):
    not the caller's fault, not a passing trouble — refused until an operator repairs it."""

    code = "internal_inconsistency"
