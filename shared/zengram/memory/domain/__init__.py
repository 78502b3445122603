"""Pure domain: models, errors, scoring. No I/O here."""
