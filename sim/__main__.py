from .cli import exiting, main

raise SystemExit(exiting(main()))
