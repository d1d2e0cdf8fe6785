"""The model: what is simulated (docs/MODEL.md), written once and run by every engine.

State is flat numpy arrays (`layout.Model`); each function is plain Python for the SimPy engine and is compiled
into the fast engine's loop (`jit`). Modules, one concept each:

- `layout`: the state's columns, program counters and codes
- `draws`: random draws through cursors; what must be refilled before an event
- `catalog`: the catalog object, its reads and its CAS
- `arrivals`: open-loop arrivals
- `transaction`: one transaction's handlers, one per catalog effect point
- `retry`: retry policies; `io`: I/O timing on lanes; `history`: the recorded history
- `build`: from a configuration to the arrays of one run, and their random sources
"""
