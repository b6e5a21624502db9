"""The placement-tax ledger (seed 000): feasibility first, then the alpha-beta ledger.

Pure arithmetic over resolved inputs: `inputs` turns a placement record into typed
specs (and lists what is missing), `feasibility` checks state against capacity,
`transfers` prices each transfer, `ledger` adds the rows, `compare` sets a feasible
candidate against the feasible reference, and `breakeven` solves (with SymPy, imported
only there) for the parameter at which the two tie.
"""
