"""English sentences of the calculation tools: refusals (``tool.refused.*``, :mod:`ventapp.tools.ventilation_tools`),
citation snippets, friction-table rows and regulation rows (``tool.cite.*``, ``tool.friction.*``, ``tool.rule.*``,
:mod:`ventapp.tools.citations`; the English is the domain's own wording).

Ids and placeholders match :mod:`ventapp.i18n.zh_cn_tools`. A sentence uses no ASCII parenthesis:
the first "(" of a refusal starts the model's English detail.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "tool.refused.bad_expression": "The expression cannot be calculated — a division by zero, a typo or a function it does not know: check the expression.",
    "tool.refused.bad_input": "An input is not acceptable — negative, zero, not a number or a unit that does not convert: check the arguments.",
    "tool.refused.no_duty": "No operating point: the fan curve does not cross the system curve at a positive flow. Check the fan curve's coefficients — a0 must be a positive pressure — and the resistance.",
    "tool.refused.unknown_airway_type": "The velocity table has no airway type “{name}”: use one of its types, e.g. coal_face, rock_heading, main_airway.",
    "tool.refused.unknown_friction_type": "The friction-factor table has no airway type “{name}”: use one of its types or give the friction factor k in kg/m³.",
    "tool.refused.no_friction_factor": "A resistance needs a friction factor: give k in kg/m³ or an airway type of the friction-factor table.",
    "tool.refused.bad_arrangement": "The arrangement must be series or parallel.",
    "tool.refused.no_requirement": "No requirement was given: give at least the people, the methane emission, the diesel power, the output or a cross-section.",
    "tool.refused.methane_k_missing": "Airflow for a methane emission needs the emission-unevenness coefficient k: measured or from AQ 1056-2008, commonly about 1.2–2.0.",
    "tool.refused.area_needs_type": "A cross-section needs an airway type, for the velocity table's minimum and maximum.",
    "tool.refused.invalid_arguments": "Invalid arguments: {fields}. The agent sees the details.",
    "tool.refused.parallel_todos": "The task list was updated twice in one step, so neither update was kept; the agent updates it once per step.",
    "tool.refused.unknown_tool": "The agent asked for a tool it does not have, {name}; it has been told which ones it has.",
    # The solver's result CSVs: a person's headers with units in Chinese; the machine names in English.
    "solver.csv.edge_id": "edge_id",
    "solver.csv.name": "name",
    "solver.csv.from": "from",
    "solver.csv.to": "to",
    "solver.csv.q_m3_s": "q_m3_s",
    "solver.csv.h_Pa": "h_Pa",
    "solver.csv.reversed": "reversed",
    "solver.csv.is_fan": "is_fan",
    "solver.csv.velocity_m_s": "velocity_m_s",
    "solver.csv.node_id": "node_id",
    "solver.csv.p_Pa": "p_Pa",
    "solver.csv.yes": "1",
    "solver.csv.no": "0",
    # The airflow_demand card: the coefficient an engineer must see, and a velocity over the limit.
    "tool.summary_methane_k": "methane unevenness k = {value}",
    "tool.summary_velocity_outside": "outside velocity limits",
    # Citation snippets of the calculation tools (ventapp.tools.citations): formulas and book titles stay.
    "tool.cite.airway_resistance": "McPherson, Subsurface Ventilation Engineering, 2nd ed. (2009), ch. 5, §5.2–5.4; friction factors: {factor}.",
    "tool.cite.friction_user": "given by the user",
    "tool.cite.friction_table": "{description} — {source}",
    "tool.cite.tien_42": "Tien, Practical Mine Ventilation Engineering, ch. 4, Table 4-2 (straight, clean)",
    "tool.cite.tien_43": "Tien, Practical Mine Ventilation Engineering, ch. 4, Table 4-3 (NCB 1979)",
    "tool.cite.thakur_24": "Thakur, Advanced Mine Ventilation (2019), ch. 2, Table 2.4",
    "tool.cite.combine": "Series: R = ΣRᵢ; parallel: 1/√R = Σ1/√Rᵢ (McPherson, ch. 7).",
    "tool.cite.fan_laws": "McPherson, ch. 10; Thakur, Advanced Mine Ventilation (2019), §6.4.",
    "tool.cite.operating_point": "Fan and system characteristic curves, McPherson ch. 10.",
    "tool.cite.nvp": "McPherson, ch. 8.",
    "tool.cite.demand": "《煤矿安全规程》 (article numbers not confirmed); methane Q = 100·q_CH4·k with k from measurements or AQ 1056-2008; Q ≥ v_min·A; McPherson ch. 9.",
    "tool.cite.network": "Atkinson's square law and Kirchhoff's laws, solved by a globalised Newton method; verified against the published mine-ventilation-network-benchmark (CC BY 4.0).",
    "tool.cite.network_velocity": "Velocity limits of 《煤矿安全规程》; article numbers not confirmed in this project.",
    # The friction-factor table's airway types (ventapp.domain.airways.FRICTION_FACTORS, by key).
    "tool.friction.coal.smooth_lined": "coal mine airway, smooth lined, straight, clean",
    "tool.friction.coal.unlined_bolted": "coal mine airway, unlined (roof-bolted), straight, clean",
    "tool.friction.coal.timbered": "coal mine airway, timbered, straight, clean",
    "tool.friction.shaft.concrete_smooth": "shaft, smooth concrete-lined, unobstructed",
    "tool.friction.shaft.brick": "shaft, brick-lined, unobstructed",
    "tool.friction.shaft.concrete_fittings": "shaft, smooth concrete-lined, rope guides and pipe ranges on buntons",
    "tool.friction.shaft.brick_fittings": "shaft, brick-lined, rope guides and pipe ranges on buntons",
    "tool.friction.shaft.tubbing": "shaft, tubbing-lined, no guides or cages",
    "tool.friction.shaft.timber": "shaft, timber-lined, no middle buntons",
    "tool.friction.arch.concrete": "steel-arched roadway, smooth concrete all round",
    "tool.friction.arch.lagged": "steel-arched roadway, concrete slabs or timber lagging between flanges all round",
    "tool.friction.rect.concrete": "rectangular coal airway, smooth, concrete-lined",
    "tool.friction.rect.girders_brick": "rectangular coal airway, steel girders on brick walls",
    "tool.friction.rect.unlined_straight": "rectangular coal airway, unlined, straight",
    "tool.friction.rect.unlined_rough": "rectangular coal airway, unlined, rough",
    "tool.friction.rect.timber_legs": "rectangular coal airway, wood beams on timber legs",
    # A regulation row's citation and verification status (ventapp.domain.regulations, by row and status).
    "tool.rule.edition_cn_coal": "2016 edition (amended 2022)",
    "tool.rule.edition_year": "{year}",
    "tool.rule.article": "art. {article}",
    "tool.rule.article_unconfirmed": "article number not confirmed",
    "tool.rule.citation": "《{standard}》 {edition}, {article}",
    "tool.rule.status_checked": "Checked against the official text ({citation}).",
    "tool.rule.status_unchecked": "Not yet checked against the official text of 《{standard}》: the value is from the project's knowledge base and the article number is not confirmed; verify before relying on it.",
    # The fan curve's legend in the solver's figures: the curve with its units, as the system curve's.
    "figure.fan_curve_units": "{label}: fan curve p = {curve}, p in Pa, q in m³/s",
}
