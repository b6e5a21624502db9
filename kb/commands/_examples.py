"""The worked example `kb new flop_class` appends: every section an author writes, commented.

Valid except for its placeholders (`~  # TODO: ...`): fill them (a bandwidth field of
an accelerator record, a receipt's measured row, the value you computed) and the record
validates clean (tests/commands/test_new.py fills them by script and checks it).
"""

from __future__ import annotations

FLOP_CLASS_EXAMPLE = """\
# ---- The maths (docs/equations.md). Replace the example with your class's own.
# symbols: name: {meaning, unit}; units are exact (GB = 1e9 B, GiB = 2^30 B), counts are "1";
# `display` is how the site typesets the name (TeX-like: BW_{hbm}, B^*_N).
symbols:
  S: {meaning: "bytes read per step", unit: GB}
  N: {meaning: "devices sharing the read", unit: "1"}
  S_dev: {meaning: "bytes each device reads", unit: GB}
  BW: {meaning: "memory bandwidth per device", unit: GB/s, display: "BW_{hbm}"}
  t: {meaning: "read time per step", unit: ms}
# equations: id: {expr: "lhs = rhs"} of numbers, symbols, + - * / ** and
# max min log exp sqrt ceil floor; `text` keeps a source's own form.
equations:
  per_device: {expr: "S_dev = S/N"}
  read_time: {expr: "t = S_dev/BW"}
  read_time_full: {expr: "t = S/(N*BW)", text: "the form the source states"}
# derivations: kb re-derives every step (define, substitute, solve_for, rewrite, scale,
# approximate, limit, regime).
derivations:
  - id: read-time
    steps:
      - {rule: define, result: per_device}
      - {rule: define, result: read_time}
      - {rule: substitute, from: [read_time, per_device], result: read_time_full}
claims:
  # numeric: `of` an equation (its right side), every other symbol bound (to another
  # record's field, or to a literal {value, unit, basis, note}), and what kb must recompute
  - id: read-time-example
    kind: numeric
    text: "16 GB read by 8 devices takes this long per step."
    of: read_time_full
    bind:
      BW: ~  # TODO: a bandwidth field of another record: hardware/<id>#memory.bandwidth
      S: {value: 16, unit: GB, basis: assumed, note: "the size of the read, chosen for the example"}
      N: {value: 8, unit: "1", basis: assumed, note: "one device per shard, chosen for the example"}
    expect:
      value: ~  # TODO: the read time you computed, in ms (kb recomputes it)
      unit: ms
      round: 0.001            # or rel_tol / abs_tol; none: exact
      basis: derived
      source: ~  # TODO: sources/<id> of the formula (or basis: unverified and no source)
  # scaling: how the result moves with one symbol
  # (law: proportional | inverse | constant | power, with exponent | affine)
  - {id: read-time-inverse-in-bandwidth, kind: scaling, of: read_time_full, var: BW, law: inverse}
  # prediction: the model against a measurement; outside `band` it is contradicted (EQ018)
  - id: spec-bandwidth-vs-measured
    kind: prediction
    text: "The spec bandwidth predicts the measured stream bandwidth within 15%."
    of: BW
    bind:
      BW: ~  # TODO: the same accelerator's hardware/<id>#memory.bandwidth
    measured: ~  # TODO: a receipt's measured row: receipts/<id>#results.<n>.value
    band: {rel: 0.15}
# A chart appears on the class's page when a numeric claim binds a symbol to an interconnect
# record's field (the x axis) and another to an accelerator's (one line per accelerator the
# class names in affected_by_hardware): docs/record-format.md, "Charts".
"""

EXAMPLES = {"flop_class": FLOP_CLASS_EXAMPLE}
