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
}
