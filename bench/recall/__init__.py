"""LoCoMo evidence-recall benchmark for Zengram search (`make bench-recall`, `python -m bench.recall`)."""
