"""The benchmark suite's parts; bench/run_bench.py is the entry point."""
