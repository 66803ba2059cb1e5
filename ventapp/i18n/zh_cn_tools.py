"""计算工具给人看的中文句子：拒绝（``tool.refused.*``，见 :mod:`ventapp.tools.ventilation_tools`），
引用摘要、摩擦阻力系数表和规程条目（``tool.cite.*``、``tool.friction.*``、``tool.rule.*``，见
:mod:`ventapp.tools.citations`）。

Ids and placeholders match :mod:`ventapp.i18n.en_tools`. A tool refuses with ``[code] sentence (detail)``:
the sentence (in the run's language) is for the person's tool card, the English detail for the model
(``ventapp.agent.tool_failure_words.failure_for_person`` keeps only the sentence). A sentence uses no ASCII
parenthesis: the first "(" starts the detail.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "tool.refused.bad_expression": "这个算式无法计算（例如除以零、写法有误或用了不支持的函数）：请检查算式后重试。",
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
    "tool.refused.parallel_todos": "同一步里两次更新了任务清单，两次都没有生效；智能体每一步只更新一次。",
    "tool.refused.unknown_tool": "智能体调用了一个它没有的工具（{name}）；已告诉它有哪些工具可用。",
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
    # Citation snippets of the calculation tools (ventapp.tools.citations): formulas and book titles stay.
    "tool.cite.airway_resistance": "McPherson, Subsurface Ventilation Engineering，第 2 版（2009），第 5 章 §5.2–5.4；摩擦阻力系数：{factor}。",
    "tool.cite.friction_user": "用户给定",
    "tool.cite.friction_table": "{description}——{source}",
    "tool.cite.tien_42": "Tien, Practical Mine Ventilation Engineering，第 4 章，表 4-2（平直、清洁）",
    "tool.cite.tien_43": "Tien, Practical Mine Ventilation Engineering，第 4 章，表 4-3（NCB 1979）",
    "tool.cite.thakur_24": "Thakur, Advanced Mine Ventilation（2019），第 2 章，表 2.4",
    "tool.cite.combine": "串联：R = ΣRᵢ；并联：1/√R = Σ1/√Rᵢ（McPherson，第 7 章）。",
    "tool.cite.fan_laws": "McPherson，第 10 章；Thakur, Advanced Mine Ventilation（2019），§6.4。",
    "tool.cite.operating_point": "风机特性曲线与系统特性曲线：McPherson，第 10 章。",
    "tool.cite.nvp": "McPherson，第 8 章。",
    "tool.cite.demand": "《煤矿安全规程》（条款号未核实）；瓦斯：Q = 100·q_CH4·k，k 取实测值或按 AQ 1056-2008 选取；Q ≥ v_min·A；McPherson，第 9 章。",
    "tool.cite.network": "阿特金森平方定律与基尔霍夫定律，用全局化牛顿法求解；已用公开的 mine-ventilation-network-benchmark（CC BY 4.0）验证。",
    "tool.cite.network_velocity": "《煤矿安全规程》的风速限值；本项目尚未核实条款号。",
    # The friction-factor table's airway types (ventapp.domain.airways.FRICTION_FACTORS, by key).
    "tool.friction.coal.smooth_lined": "煤矿巷道，光面支护，平直、清洁",
    "tool.friction.coal.unlined_bolted": "煤矿巷道，无衬砌（锚杆支护），平直、清洁",
    "tool.friction.coal.timbered": "煤矿巷道，木支架，平直、清洁",
    "tool.friction.shaft.concrete_smooth": "井筒，光面混凝土衬砌，无障碍物",
    "tool.friction.shaft.brick": "井筒，砖砌，无障碍物",
    "tool.friction.shaft.concrete_fittings": "井筒，光面混凝土衬砌，罐道梁上有钢丝绳罐道和管路",
    "tool.friction.shaft.brick_fittings": "井筒，砖砌，罐道梁上有钢丝绳罐道和管路",
    "tool.friction.shaft.tubbing": "井筒，丘宾筒衬砌，无罐道和罐笼",
    "tool.friction.shaft.timber": "井筒，木衬砌，无中间罐道梁",
    "tool.friction.arch.concrete": "钢拱巷道，四周光面混凝土",
    "tool.friction.arch.lagged": "钢拱巷道，拱架间四周铺混凝土板或木背板",
    "tool.friction.rect.concrete": "矩形煤巷，光面，混凝土衬砌",
    "tool.friction.rect.girders_brick": "矩形煤巷，砖墙上架钢梁",
    "tool.friction.rect.unlined_straight": "矩形煤巷，无衬砌，平直",
    "tool.friction.rect.unlined_rough": "矩形煤巷，无衬砌，粗糙",
    "tool.friction.rect.timber_legs": "矩形煤巷，木柱上架木梁",
    # A regulation row's citation and verification status (ventapp.domain.regulations, by row and status).
    "tool.rule.edition_cn_coal": "2016 年版（2022 年修订）",
    "tool.rule.edition_year": "{year} 年版",
    "tool.rule.article": "第 {article} 条",
    "tool.rule.article_unconfirmed": "条款号未核实",
    "tool.rule.citation": "《{standard}》{edition}，{article}",
    "tool.rule.status_checked": "已对照官方原文核实（{citation}）。",
    "tool.rule.status_unchecked": "尚未对照《{standard}》官方原文核实：该值取自本项目知识库，条款号未核实；使用前请核实。",
    # The fan curve's legend in the solver's figures: the curve with its units, as the system curve's.
    "figure.fan_curve_units": "{label}：风机特性曲线 p = {curve}，p 单位 Pa，q 单位 m³/s",
}
