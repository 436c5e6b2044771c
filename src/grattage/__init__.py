"""grattage — an online instant-lottery platform for Cash 500 000 € and Astro.

Layers, each importing only from the ones above it in this list:

1. ``grattage.games``       pure rules of each game (no I/O, randomness passed in)
2. ``grattage.blocks``      block generation, compact files, verification, sealing
3. ``grattage.service``     use cases over a unit of work
4. ``grattage.adapters``    SQLAlchemy tables, repositories, migrations, key storage
5. ``grattage.entrypoints`` the HTTP API, the pages and the ``grattage`` CLI
"""

__version__ = "0.1.0"
