"""Layer 5: entry points — the HTTP API and pages, and the ``grattage`` command line."""
