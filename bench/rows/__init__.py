"""The benchmark rows, in the order they run and appear in the report.

A row is one module here with:

  KEY      its name for `--rows`
  TITLE    its section title
  run(ctx) -> dict
           measures (method.measure for interleaved blocks) and returns a
           JSON-able result: "series" (method.summary per series), "ratios"
           (key -> method.ratio + "label"), optionally "figures" (key ->
           {"label", "value", ...}) for figures bench/compare.py should
           follow that are not ratios
  render(res) -> list[str]
           its section of RESULTS.md (helpers in report.py)
  goals(res, rows) -> list[dict]            (optional)
           its lines of the goals table (method.goal / method.judge); rows
           holds every row's result by KEY
  explain(ctx, res, goals) -> dict          (optional)
           profiles run after all measuring (profiles.py), kept in
           res["profile"] for render

ctx (run.Context) gives the programs, interpreters, ctx.pick(full, quick),
ctx.log and ctx.perf. Adding a row: write its module, list it below.
"""
from rows import (busy, forwarding, frozen, http_ping, idle, metrics, ping, pipelined,
                  reconnect, tools_call, wrap)

ROWS = [ping, tools_call, http_ping, pipelined, busy, forwarding, frozen, reconnect, idle, metrics,
        wrap]
