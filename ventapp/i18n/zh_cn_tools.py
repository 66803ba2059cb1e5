"""计算工具拒绝时给人看的中文句子（``tool.refused.*``，见 :mod:`ventapp.tools.ventilation_tools`）。

Ids and placeholders match :mod:`ventapp.i18n.en_tools`. A tool refuses with ``[code] sentence (detail)``:
the sentence (in the run's language) is for the person's tool card, the English detail for the model
(``ventapp.state.tool_summary.failure_for_person`` keeps only the sentence). A sentence uses no ASCII
parenthesis: the first "(" starts the detail.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "tool.refused.bad_input": "输入的参数不合要求（例如为负数、为零、不是数字或单位无法换算）：请检查参数后重试。",
    "tool.refused.no_duty": "没有工况点：风机特性曲线与系统特性曲线在正风量范围内不相交。请检查风机曲线系数（a0 应为正的风压）和风阻。",
    "tool.refused.unknown_airway_type": "风速表中没有巷道类型“{name}”：请选用表中的类型，如采煤工作面 coal_face、岩巷掘进 rock_heading、主要进回风巷 main_airway。",
    "tool.refused.unknown_friction_type": "摩擦阻力系数表中没有巷道类型“{name}”：请选用表中的类型，或直接给出摩擦阻力系数 α（kg/m³）。",
    "tool.refused.no_friction_factor": "算风阻需要摩擦阻力系数：请给出 α（kg/m³），或选用摩擦阻力系数表中的巷道类型。",
    "tool.refused.bad_arrangement": "连接方式只能是串联 series 或并联 parallel。",
    "tool.refused.no_requirement": "没有给出任何需风量依据：请至少给出人数、瓦斯涌出量、柴油机功率、产量或断面之一。",
    "tool.refused.methane_k_missing": "按瓦斯涌出量计算需风量还需要瓦斯涌出不均匀系数 k：请按实测或 AQ 1056-2008 给出，常见约 1.2–2.0。",
    "tool.refused.area_needs_type": "给出断面时还需要巷道类型，才能按风速表取最低和最高风速。",
    "tool.refused.invalid_arguments": "参数不合要求：{fields}。智能体会看到详细原因。",
    # The solver's result CSVs: a person's headers with units in Chinese; the machine names in English.
    "solver.csv.edge_id": "巷道编号",
    "solver.csv.name": "名称",
    "solver.csv.from": "起点",
    "solver.csv.to": "终点",
    "solver.csv.q_m3_s": "风量 (m³/s)",
    "solver.csv.h_Pa": "风压损失 (Pa)",
    "solver.csv.reversed": "反向",
    "solver.csv.is_fan": "风机",
    "solver.csv.velocity_m_s": "风速 (m/s)",
    "solver.csv.node_id": "节点编号",
    "solver.csv.p_Pa": "节点压力 (Pa)",
    "solver.csv.yes": "是",
    "solver.csv.no": "否",
    # The airflow_demand card: the coefficient an engineer must see, and a velocity over the limit.
    "tool.summary_methane_k": "瓦斯涌出不均匀系数 k = {value}",
    "tool.summary_velocity_outside": "超出风速限值",
}
