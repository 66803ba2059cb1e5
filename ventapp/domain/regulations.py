"""Regulation tables as data: one row per rule, with where it comes from and how sure we are.

China's 《煤矿安全规程》 (Coal Mine Safety Regulations) first; other jurisdictions add rows with
their own ``jurisdiction``. A row is never more confident than its evidence: ``article`` is None
unless the article number was checked against the official text, and ``verified`` is False unless
the value was. Every tool that applies a row repeats its ``status`` sentence to the user, worded in
the run's language by the tools layer (``ventapp.tools.citations``, by the row's fields; the English
here is the catalogue's English).

As of this writing **no row has been checked against the official text inside this project**:
values come from the project's knowledge base (``ventapp/tools/kb``), which names the
regulation and edition but not the article numbers. Verifying a row means reading the official
text, filling ``article`` and setting ``verified=True`` in one reviewed change.
"""

from __future__ import annotations

from dataclasses import dataclass

CN_COAL = "煤矿安全规程"
CN_COAL_EDITION = "2016 edition (amended 2022)"


@dataclass(frozen=True)
class RegulationRow:
    """One rule of a regulation.

    Attributes
    ----------
    key : str
        Stable id, e.g. ``"cn.air_per_person"``.
    jurisdiction : str
        ISO country code, e.g. ``"CN"``.
    standard, edition : str
        The regulation and its edition.
    article : str or None
        Article number, only when checked against the official text.
    quantity : str
        What the rule limits, e.g. ``"air per person"``.
    minimum, maximum : float or None
        The limits in ``unit``.
    unit : str
        Unit of the limits, e.g. ``"m³/min per person"``, ``"m/s"``, ``"%"``.
    verified : bool
        Whether the value was checked against the official text.
    kb_doc : str
        Knowledge-base document that explains the rule (cited as ``/kb/<kb_doc>``).
    """

    key: str
    jurisdiction: str
    standard: str
    edition: str
    article: str | None
    quantity: str
    minimum: float | None
    maximum: float | None
    unit: str
    verified: bool
    kb_doc: str

    @property
    def citation(self) -> str:
        """E.g. "《煤矿安全规程》 2016 edition (amended 2022), article not confirmed"."""
        article = f"art. {self.article}" if self.article else "article number not confirmed"
        return f"《{self.standard}》 {self.edition}, {article}"

    @property
    def status(self) -> str:
        """The sentence a tool must pass on with the value."""
        if self.verified and self.article:
            return f"Checked against the official text ({self.citation})."
        return (
            f"Not yet checked against the official text of 《{self.standard}》: the value is from the "
            "project's knowledge base and the article number is not confirmed; verify before relying on it."
        )


def _cn(
    key: str, quantity: str, minimum: float | None, maximum: float | None, unit: str, kb_doc: str
) -> RegulationRow:
    return RegulationRow(
        key, "CN", CN_COAL, CN_COAL_EDITION, None, quantity, minimum, maximum, unit, False, kb_doc
    )


VELOCITY_LIMITS: dict[str, RegulationRow] = {
    row.key.removeprefix("cn.velocity."): row
    for row in (
        _cn(
            "cn.velocity.ventilation_shaft",
            "air velocity: ventilation shafts and fan drifts without hoisting [无提升设备的风井和风硐]",
            None,
            15.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.materials_hoisting_shaft",
            "air velocity: shafts hoisting materials only [专为升降物料的井筒]",
            None,
            12.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.air_crossing",
            "air velocity: air crossings [风桥]",
            None,
            10.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.people_hoisting_shaft",
            "air velocity: shafts hoisting people and materials [升降人员和物料的井筒]",
            None,
            8.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.main_airway",
            "air velocity: main intake and return airways [主要进、回风巷]",
            None,
            8.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.trolley_roadway",
            "air velocity: trolley-wire locomotive roadways [架线电机车巷道]",
            1.0,
            8.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.district_airway",
            "air velocity: conveyor roadways, district intake and return airways [运输机巷，采区进、回风巷]",
            0.25,
            6.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.coal_face",
            "air velocity: coal faces, coal and half-coal headings [采煤工作面、掘进中的煤巷和半煤岩巷]",
            0.25,
            4.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.rock_heading",
            "air velocity: rock headings [掘进中的岩巷]",
            0.15,
            4.0,
            "m/s",
            "air-velocity-limits",
        ),
        _cn(
            "cn.velocity.other_roadway",
            "air velocity: other ventilated travelling roadways [其他通风人行巷道]",
            0.15,
            None,
            "m/s",
            "air-velocity-limits",
        ),
    )
}
"""Permitted mean air velocity by airway type (keys are what ``check_air_velocity`` accepts)."""

AIR_PER_PERSON = _cn(
    "cn.air_per_person",
    "air per person underground at the busiest shift",
    4.0,
    None,
    "m³/min per person",
    "air-requirements",
)
METHANE_FACE_RETURN = _cn(
    "cn.methane.face_return",
    "methane in a district or working-face return [采区回风巷、采掘工作面回风巷]",
    None,
    1.0,
    "% by volume",
    "gas-limits",
)
METHANE_MAIN_RETURN = _cn(
    "cn.methane.main_return",
    "methane in the main or wing return [矿井总回风巷或一翼回风巷]",
    None,
    0.75,
    "% by volume",
    "gas-limits",
)
METHANE_FACE_INTAKE = _cn(
    "cn.methane.face_intake",
    "methane in the intake air of a coal or development face [采掘工作面进风流]",
    None,
    0.5,
    "% by volume",
    "gas-limits",
)
CO2_FACE_RETURN = _cn(
    "cn.co2.face_return",
    "carbon dioxide in a district or working-face return",
    None,
    1.5,
    "% by volume",
    "gas-limits",
)
DIESEL_AIR_PER_KW = RegulationRow(
    "cn.diesel_per_kw",
    "CN",
    "煤矿通风能力核定标准 (AQ 1056-2008)",
    "2008",
    None,
    "air per kW of rated diesel power (explosion-proof diesel vehicles)",
    4.0,
    None,
    "m³/min per kW",
    False,
    "air-requirements",
)

ALL_ROWS: tuple[RegulationRow, ...] = (
    AIR_PER_PERSON,
    METHANE_FACE_INTAKE,
    METHANE_FACE_RETURN,
    METHANE_MAIN_RETURN,
    CO2_FACE_RETURN,
    DIESEL_AIR_PER_KW,
    *VELOCITY_LIMITS.values(),
)
