from .entry import module

raise SystemExit(module())
