"""`kb plan`: every placement of one model on given hardware, priced and compared.

enumerate.py lists the TP/PP/EP/DP mappings the devices admit; planner.py prices
each through the one composed ledger (kb.ledger.scenario, the same pricing `kb ledger`
uses) and marks the Pareto front of every pair of dimensions (pareto.py); sweep.py
repeats that over batch or context and says where the preferred mapping changes;
render.py prints the result as text or as JSON (kb/data/output/plan.v1.schema.json).
"""
