"""Normalising who is behind an account: one mailbox, one person, whatever the spelling."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.errors import InvalidInput
from grattage.service.identity import canonical_email, check_birth_date, person

MAILBOX = "name@example.org"


@pytest.mark.parametrize(
    "variant",
    [
        "name@example.org",
        "NAME@Example.ORG",
        " name@example.org ",
        "name+1@example.org",
        "name+anything@example.org",
        "name@example.org.",
        '"name"@example.org',
        "ｎａｍｅ@ｅｘａｍｐｌｅ.ｏｒｇ",  # full-width letters
        "name＋1@example.org",  # a full-width plus
    ],
)
def test_every_spelling_of_one_mailbox_has_its_key(variant: str) -> None:
    assert canonical_email(variant).mailbox_key == MAILBOX


def test_the_stored_address_keeps_its_plus_tag_but_not_its_trailing_dot() -> None:
    assert canonical_email("Name+1@Example.org.").address == "name+1@example.org"
    assert canonical_email('"name"@example.org').address == MAILBOX


@pytest.mark.parametrize(
    "hostile",
    [
        "na\u200bme@example.org",  # zero-width space
        "name@exa\u200dmple.org",  # zero-width joiner
        "\ufeffname@example.org",  # byte-order mark
        "nam\u0435@example.org",  # Cyrillic « е » among Latin letters
        "name@\u0435xample.org",  # in the domain
        "\u0440\u0430\u0443@example.org",  # only Cyrillic letters that look Latin: « рау »
        "name@\u0440\u0430\u0443.org",
        '"na me"@example.org',  # a quoted local part that needs its quotes
        "name@example..org",
        "name@example.org..",
        "@example.org",
        "name@",
        "a" * 65 + "@example.org",
    ],
)
def test_look_alike_invisible_or_malformed_addresses_are_refused(hostile: str) -> None:
    with pytest.raises(InvalidInput):
        canonical_email(hostile)


def test_an_internationalised_domain_is_stored_in_its_ascii_form() -> None:
    assert canonical_email("name@bücher.de").address == "name@xn--bcher-kva.de"


def test_a_name_in_one_foreign_script_is_a_name() -> None:
    assert person("Дмитрий", "Иванов", date(1990, 1, 1)).first_name == "Дмитрий"


BIRTH = date(1985, 6, 1)


@pytest.mark.parametrize(
    ("first", "last"),
    [
        ("Jean-Éric", "D'Artagnan"),
        ("jean éric", "d artagnan"),
        ("JEAN ERIC", "DARTAGNAN"),
        ("Jean Eric", "D’Artagnan"),  # a typographic apostrophe
        ("  Jean--Éric ", "D'Artagnan"),
        ("Ｊｅａｎ-Éric", "D'Artagnan"),  # full-width letters
        ("Jean-E\u0301ric", "D'Artagnan"),  # the accent as a combining mark
    ],
)
def test_every_spelling_of_one_person_has_their_key(first: str, last: str) -> None:
    assert person(first, last, BIRTH).key == person("Jean-Éric", "D'Artagnan", BIRTH).key


def test_a_person_is_keyed_on_the_first_given_name_alone() -> None:
    assert person("Éloïse Marie", "Martin", BIRTH).key == person("Éloïse", "Martin", BIRTH).key
    assert person("Éloïse", "Martin", BIRTH).key == "martin/eloise/1985-06-01"


def test_names_typed_in_each_other_s_field_give_the_key_in_the_swapped_key() -> None:
    swapped = person("Martin", "Éloïse Marie", BIRTH)
    assert swapped.swapped_key == person("Éloïse", "Martin", BIRTH).key


def test_ligatures_are_spelled_out() -> None:
    assert person("Cœur", "Læ", BIRTH).key == person("Coeur", "Lae", BIRTH).key


def test_another_birth_date_is_another_person() -> None:
    assert person("Ana", "Lee", BIRTH).key != person("Ana", "Lee", date(1985, 6, 2)).key


@pytest.mark.parametrize(
    "name", ["", "   ", "-'", "R2D2", "Jean\u200bEric", "Jеan", "<script>", "x" * 101]
)
def test_a_name_no_one_has_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput):
        person(name, "Martin", BIRTH)


@pytest.mark.parametrize("born", [date(1, 1, 1), date(1899, 12, 31), date(2026, 12, 2)])
def test_birth_dates_run_from_1900_to_today(born: date) -> None:
    with pytest.raises(InvalidInput):
        check_birth_date(born, date(2026, 12, 1))
    check_birth_date(date(1900, 1, 1), date(2026, 12, 1))
    check_birth_date(date(2026, 12, 1), date(2026, 12, 1))


_LETTERS = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzéèàçôïœ"), min_size=1, max_size=20
)


@given(first=_LETTERS, last=_LETTERS, separator=st.sampled_from([" ", "-", "'", "’", "  -"]))
def test_case_accents_and_separators_never_change_a_persons_key(
    first: str, last: str, separator: str
) -> None:
    plain = person(first, last, BIRTH).key
    accented = "".join(char + "\u0301" for char in first)  # a combining acute on each letter
    spaced = separator.join(last)
    assert person(accented.upper(), spaced.title(), BIRTH).key == plain


_LOCAL = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789._"), min_size=1, max_size=30
).filter(lambda local: not local.startswith(".") and not local.endswith(".") and ".." not in local)


@given(local=_LOCAL, tag=st.text(alphabet="abc123", max_size=10))
def test_a_plus_tag_case_or_trailing_dot_never_change_a_mailbox(local: str, tag: str) -> None:
    mailbox = canonical_email(f"{local}@example.org").mailbox_key
    assert canonical_email(f"{local.upper()}+{tag}@Example.org.").mailbox_key == mailbox


def test_a_gmail_mailbox_key_drops_the_dots_and_googlemail_is_gmail() -> None:
    key = canonical_email("First.Last+x@gmail.com").mailbox_key
    assert key == canonical_email("firstlast@googlemail.com").mailbox_key == "firstlast@gmail.com"
    assert canonical_email("first.last@example.org").mailbox_key == "first.last@example.org"
