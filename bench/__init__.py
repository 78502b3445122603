"""Zengram benchmarks: `make bench` (or `python -m bench.run`) measures search, embedding and write speed."""
