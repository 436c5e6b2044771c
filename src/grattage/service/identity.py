"""Who is behind an account: the mailbox of its e-mail address and the person (names and birth
date), each reduced to a key that spelling tricks cannot change.

A self-exclusion and the national exclusion register apply to a person and to a mailbox, not
to one account, so the keys must not let the same person or mailbox pass for another:

- an e-mail address is NFKC-normalised (full-width letters become ASCII), lower-cased, its
  domain's trailing dot dropped and the domain IDNA-encoded; a quoted local part that needs no
  quotes loses them; syntax is checked by ``email-validator``. An address with an invisible
  character (zero-width space…) or that mixes scripts (a Cyrillic « е » among Latin letters), or
  a non-ASCII part made only of letters that look Latin, is refused: it could only mean to
  pass for another. The mailbox key drops the ``+tag`` of plus-addressing.
- a name is NFKC-normalised, case-folded, its accents stripped (NFKD, combining marks dropped),
  œ/æ/ø/ł spelled out, and spaces, hyphens, apostrophes and dots removed: « Jean-Pierre
  D'Éon », « jean pierre deon » and « JEANPIERRE DEON » are one person. A name that mixes
  scripts is refused.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from confusable_homoglyphs import categories, confusables
from email_validator import EmailNotValidError, validate_email

from grattage.errors import InvalidInput

MAX_EMAIL_LENGTH = 254
MAX_NAME_LENGTH = 100
EARLIEST_BIRTH_DATE = date(1900, 1, 1)

_SEPARATORS = re.compile(r"[\s\-'’‘ʼ.]+")
_GIVEN_NAMES = re.compile(r"[\s\-]+")  # between given names: « Jean-Éric », « Éloïse Marie »
_DOTLESS_MAILBOXES = frozenset({"gmail.com", "googlemail.com"})
_SPELLED_OUT = str.maketrans({"œ": "oe", "æ": "ae", "ø": "o", "ł": "l", "đ": "d", "ı": "i"})


@dataclass(frozen=True)
class EmailAddress:
    address: str
    """The address as stored and shown: ``local@domain``, lower case, ASCII domain."""
    mailbox_key: str
    """The mailbox for exclusion: the address without the ``+tag`` of its local part."""


@dataclass(frozen=True)
class PersonName:
    first_name: str
    last_name: str
    """As the person typed them (NFKC, blanks trimmed), for display."""
    key: str
    """``last/first-given-name/YYYY-MM-DD``, names normalised: one person, one key."""
    swapped_key: str
    """The key had the first and last names been typed in each other's field."""


def _refuse_invisible(text: str, what: str, original: str) -> None:
    for char in text:
        if unicodedata.category(char) in {"Cc", "Cf", "Co", "Cs", "Cn"}:
            raise InvalidInput(f"{what} {original!r} has an invisible character U+{ord(char):04X}")


def _scripts(text: str) -> set[str]:
    """The scripts of the letters of ``text`` (digits and punctuation belong to none)."""
    return {
        categories.alias(char)
        for char in text
        if unicodedata.category(char)[0] == "L" and categories.alias(char) != "COMMON"
    }


def _refuse_mixed_scripts(text: str, what: str, original: str) -> None:
    scripts = _scripts(text)
    if len(scripts) > 1:
        raise InvalidInput(
            f"{what} {original!r} mixes scripts ({', '.join(sorted(scripts))}): "
            "write it in one alphabet"
        )


def _refuse_look_alikes(part: str, original: str) -> None:
    """Refuse a part of an address whose letters are foreign and all look Latin."""
    if part.isascii():
        return
    _refuse_mixed_scripts(part, "the e-mail address", original)
    found = confusables.is_confusable(part, greedy=True, preferred_aliases=["latin"])
    if found:
        letters = [char for char in part if unicodedata.category(char)[0] == "L"]
        look_alike = {entry["character"] for entry in found}
        if letters and all(char in look_alike for char in letters):
            raise InvalidInput(
                f"the e-mail address {original!r} is written in letters that look Latin"
            )


def canonical_email(email: str) -> EmailAddress:
    """The address and its mailbox key; InvalidInput if it is not a plain, honest address."""
    if len(email) > 2 * MAX_EMAIL_LENGTH:
        raise InvalidInput(f"an e-mail address has at most {MAX_EMAIL_LENGTH} characters")
    text = unicodedata.normalize("NFKC", email).strip()
    _refuse_invisible(text, "the e-mail address", email)
    if text.endswith("."):
        text = text[:-1]  # the DNS root: example.org. is example.org
    try:
        parsed = validate_email(
            text,
            check_deliverability=False,
            allow_quoted_local=True,
            allow_smtputf8=True,
            strict=True,  # RFC 5321 lengths: a local part of at most 64 octets
            # .test (RFC 6761) is the demo's (demo@grattage.test); .invalid, .local,
            # .localhost and .onion stay refused.
            test_environment=True,
        )
    except EmailNotValidError as error:
        raise InvalidInput(f"not an e-mail address: {email!r} ({error})") from None
    local = parsed.local_part.lower()
    if local.startswith('"'):
        raise InvalidInput(f"a quoted e-mail address is refused: {email!r}")
    _refuse_look_alikes(local, email)
    for label in parsed.domain.split("."):
        _refuse_look_alikes(label, email)
    domain = parsed.ascii_domain.lower()
    address = f"{local}@{domain}"
    if len(address) > MAX_EMAIL_LENGTH:
        raise InvalidInput(f"an e-mail address has at most {MAX_EMAIL_LENGTH} characters")
    mailbox = local.split("+", 1)[0] or local
    if domain in _DOTLESS_MAILBOXES:
        # Gmail delivers first.last@ and firstlast@ to one mailbox, and googlemail.com is
        # gmail.com; elsewhere a dot may name another mailbox, so it is kept.
        mailbox, domain = mailbox.replace(".", "") or mailbox, "gmail.com"
    return EmailAddress(address=address, mailbox_key=f"{mailbox}@{domain}")


def _name_key(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name.casefold().translate(_SPELLED_OUT))
    bare = "".join(char for char in folded if not unicodedata.combining(char))
    return unicodedata.normalize("NFKC", _SEPARATORS.sub("", bare))


def name_search_key(word: str) -> str:
    """A word typed to look a person up, as their key spells it: « Éloïse » finds « eloise »."""
    return _name_key(unicodedata.normalize("NFKC", word))


def _clean_name(name: str, what: str) -> tuple[str, str]:
    text = unicodedata.normalize("NFKC", name).strip()
    _refuse_invisible(text, what, name)
    if not 1 <= len(text) <= MAX_NAME_LENGTH:
        raise InvalidInput(f"a {what} has 1 to {MAX_NAME_LENGTH} characters")
    for char in _SEPARATORS.sub("", text):
        if unicodedata.category(char)[0] not in {"L", "M"}:
            raise InvalidInput(f"a {what} is letters, spaces, hyphens and apostrophes: {name!r}")
    _refuse_mixed_scripts(text, f"the {what}", name)
    key = _name_key(text)
    if not key:
        raise InvalidInput(f"a {what} needs at least one letter: {name!r}")
    return " ".join(text.split()), key


def check_birth_date(birth_date: date, today: date) -> None:
    """Birth dates from 1900-01-01 to ``today`` (the operator's date)."""
    if not EARLIEST_BIRTH_DATE <= birth_date <= today:
        raise InvalidInput(
            f"birth_date {birth_date.isoformat()!r} is not between "
            f"{EARLIEST_BIRTH_DATE.isoformat()} and today ({today.isoformat()})"
        )


def _given_key(first_name: str) -> str:
    """The key of the first given name alone: « Éloïse Marie » and « Jean-Éric » are keyed
    « eloise » and « jean », so adding or dropping a second given name changes nothing."""
    return _name_key(_GIVEN_NAMES.split(first_name.strip(), 1)[0]) or _name_key(first_name)


def person(first_name: str, last_name: str, birth_date: date) -> PersonName:
    """The person's names for display and their keys; InvalidInput for a name no one has."""
    first, _ = _clean_name(first_name, "first name")
    last, last_key = _clean_name(last_name, "last name")
    born = birth_date.isoformat()
    swapped = f"{_name_key(first)}/{_given_key(last)}/{born}"
    return PersonName(first, last, f"{last_key}/{_given_key(first)}/{born}", swapped)
