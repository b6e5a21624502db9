"""Numbers in prose: templates that bind a figure or a claim, quotations, bare numbers.

`scan` splits a free-text string into templates (`{hardware/x#memory.bandwidth|TB/s}`,
`{claim:id}`), verbatim quotations (`"..."`, `“...”`), code spans and the number
tokens outside them, and says which of those are figures; `fields` says which
fields of a record are prose; `render` resolves a template to a value, a unit and
its provenance (kb.equations.bind and kb.quantities: no second unit table).
docs/record-format.md ("Numbers in prose") is the user's description.
"""
