"""What an import found, as text: the history read, its tables, commits, time span, the operations' mix and the
rate by hour (UTC), and what it read but does not replay."""
from __future__ import annotations

from .history import History

MAX_TABLES = 10          # tables listed by name, busiest first; the rest counted
MAX_HOURS = 48           # a span up to this many hours is listed hour by hour, a longer one by hour of day


def _when(ms: float) -> str:
    import pandas as pd
    return pd.Timestamp(ms, unit="ms", tz="UTC").strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _span(seconds: float) -> str:
    for unit, size in (("days", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def _mix(ops) -> str:
    counts = ops.value_counts()
    return ", ".join(f"{op} {n} ({100 * n / len(ops):.1f} %)" for op, n in counts.items())


def _hours(df) -> list[str]:
    """Commits per clock hour over the span (an hour with none listed too), or per hour of day if it is long."""
    import pandas as pd
    hours = pd.to_datetime(df["time_ms"], unit="ms", utc=True).dt.floor("h")
    per = hours.value_counts().sort_index()
    span = pd.date_range(per.index[0], per.index[-1], freq="h")
    peak = per.idxmax()
    lines = [f"busiest hour {peak:%Y-%m-%d %H:00} UTC: {per[peak]} commits ({per[peak] / 3600:.4f} /s)"]
    if len(span) <= MAX_HOURS:
        per = per.reindex(span, fill_value=0)
        lines += [f"  {h:%Y-%m-%d %H:00}  {n:6d} commits  {n / 3600:.4f} /s" for h, n in per.items()]
        return lines
    days = len(span) / 24
    of_day = hours.dt.hour.value_counts().reindex(range(24), fill_value=0)
    lines.append(f"by hour of day (UTC), mean over {days:.1f} days:")
    lines += [f"  {h:02d}:00  {n / days:8.1f} commits/h  {n / days / 3600:.4f} /s" for h, n in of_day.items()]
    return lines


def text(history: History, frame) -> str:
    lines = [f"read: {history.read}"] + [f"note: {n}" for n in history.notes]
    if len(frame) == 0:
        lines.append("trace: no commits")
    else:
        first, last = frame["time_ms"].iloc[0], frame["time_ms"].iloc[-1]
        tables = frame.groupby("table", sort=False)["operation"]
        n_tables = frame["table"].nunique()
        lines += [f"trace: {len(frame)} commits on {n_tables} table{'s' * (n_tables != 1)}, {_when(first)} to "
                  f"{_when(last)} UTC ({_span((last - first) / 1000)}"
                  f"{f', {len(frame) / ((last - first) / 1000):.3g} commits/s' if last > first else ''})",
                  f"operations: {_mix(frame['operation'])}", "tables, busiest first:"]
        busiest = tables.size().sort_values(ascending=False, kind="stable")
        for table in busiest.index[:MAX_TABLES]:
            ops = tables.get_group(table).value_counts()
            lines.append(f"  {table}: {busiest[table]} commits ({', '.join(f'{o} {n}' for o, n in ops.items())})")
        if len(busiest) > MAX_TABLES:
            lines.append(f"  ... {len(busiest) - MAX_TABLES} more tables, {busiest.iloc[MAX_TABLES:].sum()} commits")
        lines += _hours(frame)
    if history.skipped:
        lines.append("not replayed: " + ", ".join(f"{n} {kind}" for kind, n in history.skipped.most_common()))
    return "\n".join(lines)
