"""English sentences of the calculation tools' refusals (``tool.refused.*``, :mod:`ventapp.tools.ventilation_tools`).

Ids and placeholders match :mod:`ventapp.i18n.zh_cn_tools`. A sentence uses no ASCII parenthesis:
the first "(" of a refusal starts the model's English detail.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
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
}
