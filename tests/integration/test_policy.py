"""Configuration once: every value of the service's policy is a setting, whose default is
written in ``Settings`` alone, and a platform follows the settings it was built with."""

from __future__ import annotations

from pathlib import Path

import pytest

from grattage.entrypoints.bootstrap import build_platform
from grattage.service.context import Platform, Policy
from grattage.settings import Settings
from support import World, database_url, settings_for

POLICY_VALUES = sorted(
    name for name, member in vars(Policy).items() if isinstance(member, property)
)


def test_every_policy_value_is_a_setting_with_its_one_default() -> None:
    assert len(POLICY_VALUES) == 22  # the try mode added three (try_balance_cents…)
    for name in POLICY_VALUES:
        assert isinstance(Settings.model_fields[name].default, int | float | str), name


def test_a_platform_cannot_be_built_without_the_operators_policy() -> None:
    with pytest.raises(TypeError, match="policy"):
        Platform(uow=None, keys=None)  # type: ignore[arg-type,call-arg]


def test_the_platform_follows_the_settings_it_was_built_with(world: World) -> None:
    assert world.platform.policy is world.settings


def test_a_setting_from_the_environment_reaches_the_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRATTAGE_LOCKOUT_THRESHOLD", "9")
    monkeypatch.setenv("GRATTAGE_REALITY_CHECK_MINUTES", "15")
    monkeypatch.setenv("GRATTAGE_CLOSE_BLOCK_WHEN_TOP_PRIZE_SOLD", "true")
    with database_url("sqlite", tmp_path) as url:
        platform = build_platform(settings_for(url, tmp_path), run_migrations=False)
        try:
            assert platform.policy.lockout_threshold == 9
            assert platform.policy.reality_check_minutes == 15
            assert platform.policy.close_block_when_top_prize_sold is True
            assert (
                platform.policy.abandon_seconds == Settings.model_fields["abandon_seconds"].default
            )
        finally:
            platform.uow.close()  # type: ignore[attr-defined]
