"""streamflow's benchmark suite against the official SDK stream helpers and the JSON parse floor.

Run ``python -m bench`` from the repository root (``--quick`` for a tiny workload);
see bench/README.md for the workloads, the method and the results.
"""
