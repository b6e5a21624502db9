"""The rule catalogue: every rule module, in code order.

This tuple is the table of contents of what kb checks. A test asserts that
every module in this folder is listed, that codes and names are unique, and
that every rule has documentation. Modules are imported on first use.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

RULE_MODULES: tuple[str, ...] = (
    # LD: loading
    "file_unreadable",  # LD001
    "invalid_utf8",  # LD002
    "file_too_large",  # LD003
    "yaml_syntax_error",  # LD004
    "duplicate_key",  # LD005
    "unsafe_tag",  # LD006
    "nesting_too_deep",  # LD007
    "alias_expansion_over_budget",  # LD008
    "yaml11_number_as_text",  # LD009
    "yaml11_boolean",  # LD010
    "not_a_mapping",  # LD011
    "yml_extension",  # LD012
    "non_string_key",  # LD013
    "non_finite_number",  # LD014
    # SC: schema
    "schema_violation",  # SC001
    "figure_dimension_mismatch",  # SC002
    # ID: identity
    "id_path_mismatch",  # ID001
    "kind_folder_mismatch",  # ID002
    "duplicate_id",  # ID003
    "duplicate_item_id",  # ID004
    # RF: references
    "dangling_reference",  # RF001
    "wrong_kind_reference",  # RF002
    # PV: provenance
    "missing_basis",  # PV001
    "missing_source",  # PV002
    "assumed_without_note",  # PV003
    # VR: versioning
    "missing_history_entry",  # VR001
    "history_out_of_order",  # VR002
    "changed_without_version_bump",  # VR003
    "deleted_without_deprecation",  # VR004
    # EV: evidence
    "native_evidence_without_fak_native",  # EV001
    "receipt_provenance_incomplete",  # EV002
    "receipt_parallel_degree_mismatch",  # EV003
    # EQ: equations (kb/equations)
    "eq_expression_unsafe",  # EQ001
    "eq_symbol_undeclared",  # EQ002
    "eq_unit_unknown",  # EQ003
    "eq_dimension_mismatch",  # EQ004
    "eq_derivation_refuted",  # EQ005
    "eq_derivation_unverified",  # EQ006
    "eq_numeric_claim_refuted",  # EQ007
    "eq_scaling_claim_refuted",  # EQ008
    "eq_effect_claim_refuted",  # EQ009
    "eq_binding_unresolved",  # EQ010
    "eq_binding_not_a_quantity",  # EQ011
    "eq_binding_unit_mismatch",  # EQ012
    "eq_model_figure_mismatch",  # EQ013
    "eq_check_timeout",  # EQ014
    "eq_claim_unverified",  # EQ015
    "eq_reference_unknown",  # EQ016
    "eq_erratum_not_refuted",  # EQ017
    "eq_prediction_contradicted",  # EQ018
    "eq_prediction_not_independent",  # EQ019
    "eq_erratum_link_unknown",  # EQ020
    "eq_uses_target_unknown",  # EQ021
    "eq_uses_target_not_equation",  # EQ022
    "eq_uses_symbol_undeclared",  # EQ023
    "eq_uses_unit_mismatch",  # EQ024
    "eq_uses_disagrees",  # EQ025
    "eq_published_figure_unexplained",  # EQ026
    "eq_claim_text_number_mismatch",  # EQ027
    "eq_accepted_not_contradicted",  # EQ028
    "eq_check_internal_limit",  # EQ029
    # LG: ledger (kb/ledger)
    "ratio_against_infeasible_placement",  # LG001
    "boundary_crossing_without_ledger",  # LG002
    "reference_infeasible",  # LG003
    "ledger_inputs_incomplete",  # LG004
    "overlap_exceeds_useful_compute",  # LG005
    "stated_ratio_mismatch",  # LG006
    "proposal_candidate_unknown",  # LG007
    "proposal_adopts_infeasible_candidate",  # LG008
    "collective_priced_off_size",  # LG009
    "measured_term_disagrees",  # LG010
    "proposal_ledger_not_the_planners",  # LG011
    "cross_node_ring_nics",  # LG012
    # PR: numbers in prose (kb/prose)
    "prose_template_unresolved",  # PR001
    "prose_template_unit",  # PR002
    "prose_number_unbound",  # PR003
    # WV: waivers (run last: they read which waivers were used)
    "unused_waiver",  # WV001
    "unknown_waiver_code",  # WV002
)


@cache
def rule_module(name: str) -> ModuleType:
    return importlib.import_module(f"kb.rules.{name}")


def all_rules() -> list[ModuleType]:
    """Every rule module, in catalogue order."""
    return [rule_module(name) for name in RULE_MODULES]


def by_code(code: str) -> ModuleType | None:
    """The rule with this code (case-insensitive), or None."""
    return _by_code().get(code.upper())


def owner(code: str) -> ModuleType:
    """The rule module that owns `code`; a code no module owns is a fault in kb (KeyError)."""
    rule = _by_code().get(code)
    if rule is None:
        raise KeyError(f"no rule module owns code {code!r}: add it to kb/rules (RULE_MODULES)")
    return rule


@cache
def _by_code() -> dict[str, ModuleType]:
    return {rule.CODE: rule for rule in all_rules()}


def summary(rule: ModuleType) -> str:
    """The first line of a rule's docstring: the requirement."""
    return (rule.__doc__ or "").strip().splitlines()[0]
