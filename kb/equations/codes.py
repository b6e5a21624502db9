"""Every EQ code the equations engine emits, named once: grep finds one place.

The engine modules and the EQ rule modules (kb/rules/eq_*.py) import these names;
no other file spells an EQ code. Each code is owned by the rule module of the same
name (`EXPRESSION_UNSAFE` by kb/rules/eq_expression_unsafe.py), which states its
severity, its default hint and its documentation.
"""

from __future__ import annotations

EXPRESSION_UNSAFE = "EQ001"
SYMBOL_UNDECLARED = "EQ002"
UNIT_UNKNOWN = "EQ003"
DIMENSION_MISMATCH = "EQ004"
DERIVATION_REFUTED = "EQ005"
DERIVATION_UNVERIFIED = "EQ006"
NUMERIC_CLAIM_REFUTED = "EQ007"
SCALING_CLAIM_REFUTED = "EQ008"
EFFECT_CLAIM_REFUTED = "EQ009"
BINDING_UNRESOLVED = "EQ010"
BINDING_NOT_A_QUANTITY = "EQ011"
BINDING_UNIT_MISMATCH = "EQ012"
MODEL_FIGURE_MISMATCH = "EQ013"
CHECK_TIMEOUT = "EQ014"
CLAIM_UNVERIFIED = "EQ015"
REFERENCE_UNKNOWN = "EQ016"
ERRATUM_NOT_REFUTED = "EQ017"
PREDICTION_CONTRADICTED = "EQ018"
PREDICTION_NOT_INDEPENDENT = "EQ019"
ERRATUM_LINK_UNKNOWN = "EQ020"
USES_TARGET_UNKNOWN = "EQ021"
USES_TARGET_NOT_EQUATION = "EQ022"
USES_SYMBOL_UNDECLARED = "EQ023"
USES_UNIT_MISMATCH = "EQ024"
USES_DISAGREES = "EQ025"
PUBLISHED_FIGURE_UNEXPLAINED = "EQ026"
CLAIM_TEXT_NUMBER_MISMATCH = "EQ027"  # read from the analysis by its rule, not emitted
ACCEPTED_NOT_CONTRADICTED = "EQ028"
CHECK_INTERNAL_LIMIT = "EQ029"

# A claim's kind -> the code its refutation is reported with.
CLAIM_REFUTED = {
    "numeric": NUMERIC_CLAIM_REFUTED,
    "scaling": SCALING_CLAIM_REFUTED,
    "effect": EFFECT_CLAIM_REFUTED,
    "prediction": PREDICTION_CONTRADICTED,
    "bound": PREDICTION_CONTRADICTED,
}

# The kinds held to a measurement (`measured:`): a point prediction in a band, or a bound.
MEASURED_KINDS = ("prediction", "bound")
