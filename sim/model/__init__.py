"""The model: what is simulated (docs/MODEL.md), written once and run by every engine.

State is named: a transaction slot's fields (`tx = m.tx[j]; tx.attempts`), the run's scalars (`m.run[0].seq`),
the parameters (`m.p.max_attempts`) and codes (`PC.CAS`, `Outcome.COMMITTED`) are declared in `state`. Each
function is plain Python for the SimPy engine and is compiled into the fast engine's loop (`jit`). Modules, one
concept each:

- `state`: the state's fields, the parameters, the codes, the `Model` tuple
- `params`, `sources`, `slots`, `build`: a configuration's parameters; its random sources; the transaction slots
  and where their records go; the run that keeps them filled between events
- `draws`: random draws through cursors; what must be refilled before an event
- `catalog`: the catalog (one object, or one pointer per table: `catalog.scope`), its reads and its CAS
- `throttle`: per-object mutation limits (token buckets per object name)
- `arrivals`: open-loop arrivals; `writers`: a fixed set of writers (closed loop, or periodic)
- `transaction`: what every protocol shares (the start, reads, starting a conditional write, a 429's resend, the end)
- `resend`: the storage clients' resend policies (their sleeps; when they give a request up)
- `rewrite`: Iceberg's protocol, one handler per catalog effect point; `log`: Delta Lake's log protocol
- `server`: a REST catalog server's commit (its load, metadata.json PUT, database CAS and retries)
- `fs_table`: version files (Iceberg file-system tables): the version hint's reads and writes, the probes
- `step`: the dispatch engines call at each effect point
- `retry`: retry policies; `io`: I/O timing on lanes; `history`: the recorded history
"""
