"""Layer 3: the use cases (register, log in, deposit, buy, reveal, finish, sweep, reconcile,
history). Each takes plain values and a :class:`~grattage.service.context.Platform` (unit of
work, key store, clock, policy); the API, the CLI and the tests call the same functions."""
