"""Layer 2: blocks — finite pools of pre-determined units: generation, compact files,
verification, sealing (per-block secrets, salts, encrypted tiers) and commitments."""
