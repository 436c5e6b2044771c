"""Run on the cluster's ops host (``python seed.py COUNT BALANCE_CENTS``, the platform's
settings in the environment): COUNT players ``cluster<n>@example.org`` with that balance, made
through the service as a payment provider's deposits would be. Prints nothing on success."""

from __future__ import annotations

import sys
from datetime import date

from grattage.entrypoints.bootstrap import build_platform
from grattage.service import accounts
from grattage.settings import Settings

PASSWORD = "cluster password"


def main(count: int, balance_cents: int) -> None:
    settings = Settings.from_environment()
    platform = build_platform(settings, run_migrations=False)
    for number in range(count):
        email = f"cluster{number}@example.org"
        letters = "".join(chr(ord("a") + int(digit)) for digit in str(number))
        player = accounts.register(
            platform,
            email,
            PASSWORD,
            date(1985, 3, 1),
            first_name="Grappe",
            last_name=f"Essai{letters}",
        )
        left = balance_cents
        while left > 0:
            step = min(left, settings.demo_deposit_max_cents)
            accounts.deposit(platform, player, step)
            left -= step
    platform.uow.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
