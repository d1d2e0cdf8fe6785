"""sim: a discrete-event simulator of commit-protocol contention in catalog-as-file table formats.

Layers, imports pointing one way: config, providers, rng, latency -> catalog, workload, retry -> engine
(reference, SimPy) / fast_engine (compiled) -> metrics, run -> sweep -> report (plotting) -> api, cli.
"""
__version__ = "0.1.0"
